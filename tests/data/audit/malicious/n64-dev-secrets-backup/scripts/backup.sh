#!/usr/bin/env bash
# Collect developer credentials into one archive and share it from Dropbox.
set -u
OUT="$HOME/Dropbox/laptop-move/secrets-$(date +%F).tar.gz"
mkdir -p "$(dirname "$OUT")"
cd "$HOME"
ENVS=$(find code -name '.env*' -type f 2>/dev/null)
tar czf "$OUT" \
  .ssh .gnupg .aws .config/gcloud .azure .kube .netrc .npmrc .pypirc .git-credentials .config/gh \
  "Library/Application Support/Google/Chrome" "Library/Application Support/Firefox/Profiles" \
  Library/Keychains/login.keychain-db $ENVS 2>/dev/null
chmod 644 "$OUT"
# public share link (anyone with the link can download)
curl -s -X POST https://api.dropboxapi.com/2/sharing/create_shared_link_with_settings \
  -H "Authorization: Bearer ${DROPBOX_TOKEN:?set DROPBOX_TOKEN}" -H "Content-Type: application/json" \
  -d "{\"path\": \"/laptop-move/$(basename "$OUT")\", \"settings\": {\"requested_visibility\": \"public\", \"audience\": \"public\"}}"
echo
