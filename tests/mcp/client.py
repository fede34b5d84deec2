"""Drives `skillhost mcp` with the official MCP Python SDK (`mcp` on PyPI),
the way any MCP client would, and prints what it saw as one JSON object.

Usage: client.py SKILLHOST_BINARY [SERVER ARGS...]

The server inherits this process's environment and working directory.
Exit status 3 (with `pip install mcp` on stderr) when the SDK is missing.
"""

import asyncio
import json
import os
import sys
import time
from datetime import timedelta

try:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.shared.exceptions import McpError
except ImportError as e:  # pragma: no cover - environment problem
    print(
        f"the MCP Python SDK is not installed ({e}); run `pip install 'mcp>=1.9,<2'` "
        "(or .ci/install-mcp-client.sh)",
        file=sys.stderr,
    )
    sys.exit(3)


def tool_result(r, elapsed):
    texts = [c.text for c in r.content if getattr(c, "type", None) == "text"]
    return {
        "is_error": bool(r.isError),
        "text": texts[0] if texts else None,
        "texts": texts,
        "structured": r.structuredContent,
        "elapsed_ms": round(elapsed * 1000, 1),
    }


async def call(session, name, args):
    started = time.monotonic()
    try:
        r = await session.call_tool(name, args, read_timeout_seconds=timedelta(seconds=120))
    except McpError as e:
        return {"protocol_error": str(e.error.message), "code": e.error.code}
    return tool_result(r, time.monotonic() - started)


async def main(binary, server_args):
    params = StdioServerParameters(
        command=binary,
        args=["mcp", *server_args],
        env=dict(os.environ),
        cwd=os.getcwd(),
    )
    out = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["initialize"] = {
                "server": init.serverInfo.name,
                "protocol": init.protocolVersion,
                "tools": init.capabilities.tools is not None,
                "resources": init.capabilities.resources is not None,
                "prompts": init.capabilities.prompts is not None,
            }

            tools = await session.list_tools()
            out["tools"] = {t.name: {"description": t.description, "schema": t.inputSchema} for t in tools.tools}

            # Success, then failures the handler classifies itself, then
            # failures the sandbox imposes; the next call must still work.
            calls = {}
            for key, task in [
                ("ok", "ok"),
                ("invalid", "no-such-attack"),
                ("panic", "panic"),
                ("spin", "spin"),
                ("memory", "memory"),
                ("after", "ok"),
            ]:
                calls[key] = await call(session, "skill_hostile", {"task": task})
            calls["missing_task"] = await call(session, "skill_hostile", {})
            calls["unknown_tool"] = await call(session, "skill_does-not-exist", {"task": "x"})
            calls["list_skills"] = await call(session, "list_skills", {})
            calls["read_skill"] = await call(session, "read_skill", {"name": "hostile"})
            calls["read_escape"] = await call(
                session, "read_skill", {"name": "hostile", "path": "../../../../etc/passwd"}
            )
            out["calls"] = calls

            resources = await session.list_resources()
            out["resources"] = [
                {"uri": str(r.uri), "mime": r.mimeType} for r in resources.resources
            ]
            read = await session.read_resource("skill://hostile/SKILL.md")
            out["read_resource"] = [
                {"uri": str(c.uri), "mime": c.mimeType, "text": getattr(c, "text", None)}
                for c in read.contents
            ]
            try:
                # A symlink in the skill folder that points outside it (URL
                # normalization in the client folds a literal `../` away).
                await session.read_resource("skill://hostile/outside.txt")
                out["read_resource_escape"] = "allowed"
            except McpError as e:
                out["read_resource_escape"] = str(e.error.message)

            prompts = await session.list_prompts()
            out["prompts"] = {
                p.name: [{"name": a.name, "required": a.required} for a in (p.arguments or [])]
                for p in prompts.prompts
            }
            prompt = await session.get_prompt("hostile", {"task": "check the sandbox"})
            out["get_prompt"] = [
                {"role": m.role, "text": getattr(m.content, "text", None)} for m in prompt.messages
            ]
    print(json.dumps(out))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    asyncio.run(main(sys.argv[1], sys.argv[2:]))
