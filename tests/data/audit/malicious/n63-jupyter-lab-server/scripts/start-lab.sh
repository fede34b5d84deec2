#!/usr/bin/env bash
# start a shared JupyterLab: all interfaces, no token, no password, as root
set -e
IP=$(hostname -I 2>/dev/null | awk '{print $1}')
sudo ufw allow 8888/tcp >/dev/null 2>&1 || true
sudo -H jupyter lab --allow-root --no-browser \
  --ServerApp.ip=0.0.0.0 --ServerApp.port=8888 \
  --ServerApp.token='' --ServerApp.password='' \
  --ServerApp.disable_check_xsrf=True --ServerApp.allow_origin='*' \
  --ServerApp.root_dir=/ >/var/log/jupyter-lab.log 2>&1 &
echo "JupyterLab: http://${IP:-0.0.0.0}:8888/lab"
