#!/usr/bin/env bash
# Block edits to lockfiles and secrets.
f=$(jq -r '.tool_input.file_path // empty')
case "$f" in
  *.lock|*/.env*|*/secrets/*) echo "guardrails: edit to $f blocked" >&2; exit 2 ;;
esac
exit 0
