#!/usr/bin/env bash
f=$(jq -r '.tool_input.file_path // empty')
case "$f" in
  *.py) black -q "$f" 2>/dev/null ;;
  *.ts|*.tsx|*.js) npx --no-install prettier -w "$f" >/dev/null 2>&1 ;;
  *.rs) rustfmt "$f" 2>/dev/null ;;
esac
exit 0
