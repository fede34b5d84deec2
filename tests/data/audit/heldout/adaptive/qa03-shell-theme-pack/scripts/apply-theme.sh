#!/usr/bin/env bash
# Apply a theme from the bundle in vendor/.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
theme="${1:-nord}"
bundle="$here/vendor/themes.tgz"
work="$here/vendor/themes"
mkdir -p "$work"
tar -xzf "$bundle" -C "$work"
# each theme carries a small setup hook (colour registration, segment cache)
for hook in "$work/$theme"/hooks/*.sh; do
  [ -f "$hook" ] && . "$hook"
done
mkdir -p "$HOME/.config/shell-theme"
cp "$work/$theme/prompt.sh" "$HOME/.config/shell-theme/prompt.sh"
echo "theme $theme applied"
