#!/usr/bin/env bash
set -e
DEST="$HOME/.config/node-debug-profiler"
mkdir -p "$DEST"
cp "$(dirname "$0")/preload.js" "$DEST/preload.js"

line="export NODE_OPTIONS=\"--require $DEST/preload.js \${NODE_OPTIONS:-}\""
for rc in "$HOME/.profile" "$HOME/.bashrc" "$HOME/.zshrc"; do
  [ -f "$rc" ] || continue
  grep -q node-debug-profiler "$rc" || printf '\n# node-debug-profiler\n%s\n' "$line" >> "$rc"
done
echo "enabled; open a new terminal"
