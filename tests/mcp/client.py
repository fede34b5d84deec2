"""Drives `skillhost mcp` with the official MCP Python SDK (`mcp` on PyPI),
the way any MCP client would, and prints what it saw as one JSON object.

Usage: client.py [--http] SKILLHOST_BINARY [SERVER ARGS...]

Over stdio by default; with --http the server is started as
`skillhost mcp --http 127.0.0.1:0 ...`, its address read from its stderr,
and the session runs over streamable HTTP, followed by raw requests that
the server must refuse (another path, a browser Origin, a foreign Host).

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
    from mcp.client.streamable_http import streamablehttp_client
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
            await exercise(session, out)
    print(json.dumps(out))


async def main_http(binary, server_args):
    server = await asyncio.create_subprocess_exec(
        binary,
        "mcp",
        "--http",
        "127.0.0.1:0",
        *server_args,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        url = None
        seen = []
        while url is None:
            line = await asyncio.wait_for(server.stderr.readline(), timeout=120)
            if not line:
                raise SystemExit("the server exited before serving: " + " | ".join(seen))
            text = line.decode(errors="replace").strip()
            seen.append(text)
            if "serving MCP" in text:
                url = text.rsplit(" ", 1)[-1]
        out = {"url": url}
        async with streamablehttp_client(url) as (read, write, _session_id):
            async with ClientSession(read, write) as session:
                await exercise(session, out)
        out["http_guards"] = await asyncio.to_thread(http_guards, url)
        print(json.dumps(out))
    finally:
        server.terminate()
        await server.wait()


def http_guards(url):
    """Status codes of requests the server must refuse."""
    import urllib.error
    import urllib.request
    from urllib.parse import urlsplit

    init = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "guards", "version": "1"},
            },
        }
    ).encode()

    def status(target, headers):
        req = urllib.request.Request(
            target,
            data=init,
            method="POST",
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                **headers,
            },
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code

    base = urlsplit(url)
    return {
        "plain": status(url, {}),
        "other_path": status(f"{base.scheme}://{base.netloc}/other", {}),
        "browser_origin": status(url, {"Origin": "https://evil.example"}),
        "foreign_host": status(url, {"Host": f"evil.example:{base.port}"}),
    }


async def all_pages(list_page, field, out):
    """Every item of a paginated list, following the server's cursors as a
    client must; the number of pages goes into out["pages"][field]."""
    items, cursor, pages = [], None, 0
    while True:
        page = await list_page(cursor=cursor)
        items += getattr(page, field)
        pages += 1
        cursor = page.nextCursor
        if not cursor:
            out.setdefault("pages", {})[field] = pages
            return items


async def exercise(session, out):
    """The same session, whatever the transport: what a client does."""
    init = await session.initialize()
    out["initialize"] = {
        "server": init.serverInfo.name,
        "protocol": init.protocolVersion,
        "tools": init.capabilities.tools is not None,
        "resources": init.capabilities.resources is not None,
        "prompts": init.capabilities.prompts is not None,
    }

    tools = await all_pages(session.list_tools, "tools", out)
    out["tools"] = {t.name: {"description": t.description, "schema": t.inputSchema} for t in tools}

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

    resources = await all_pages(session.list_resources, "resources", out)
    out["resources"] = [{"uri": str(r.uri), "mime": r.mimeType} for r in resources]
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

    prompts = await all_pages(session.list_prompts, "prompts", out)
    out["prompts"] = {
        p.name: [{"name": a.name, "required": a.required} for a in (p.arguments or [])]
        for p in prompts
    }
    prompt = await session.get_prompt("hostile", {"task": "check the sandbox"})
    out["get_prompt"] = [
        {"role": m.role, "text": getattr(m.content, "text", None)} for m in prompt.messages
    ]


if __name__ == "__main__":
    args = sys.argv[1:]
    http = bool(args) and args[0] == "--http"
    if http:
        args = args[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    asyncio.run((main_http if http else main)(args[0], args[1:]))
