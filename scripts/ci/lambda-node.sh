#!/usr/bin/env bash
# Runs a command with Node.js 22, the version Lambda runs the functions on (nodejs22.x, infra/stack.ts),
# first on PATH: `scripts/ci/lambda-node.sh npm test`. When the `node` on PATH is another major
# version, Node.js 22 is installed once from the npm registry (the `node-<platform>-<arch>`
# package ships the binary; nothing else is downloaded) into
# ${XDG_CACHE_HOME:-~/.cache}/inventory-api/node22, outside node_modules so `npm ci` keeps it.
set -euo pipefail
MAJOR=22
if [ "$(node -p 'process.versions.node.split(".")[0]')" != "$MAJOR" ]; then
  platform=$(node -p 'process.platform === "win32" ? "win" : process.platform')
  arch=$(node -p 'process.arch')
  dir="${XDG_CACHE_HOME:-$HOME/.cache}/inventory-api/node$MAJOR"
  bin="$dir/node_modules/node-$platform-$arch/bin"
  if [ ! -x "$bin/node" ]; then
    echo "installing Node.js $MAJOR from the npm registry (node-$platform-$arch@$MAJOR) into $dir" >&2
    npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error --prefix "$dir" "node-$platform-$arch@$MAJOR" >&2
  fi
  export PATH="$bin:$PATH"
fi
echo "$* on node $(node -v)" >&2
exec "$@"
