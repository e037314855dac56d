#!/bin/sh
# The container image's entrypoint (Dockerfile). With no arguments, or `start …`, it runs
#   chain-node start --home "$CHAIN_NODE_HOME" …
# Any other arguments run that chain-node command as given (pass --home yourself), e.g.
#   docker run --rm -v chain-node:/var/lib/chain-node IMAGE keys list --home /var/lib/chain-node
#
# A home without genesis.json is refused with one line, unless CHAIN_NODE_INIT=1 asks for
# `chain-node init` first (a one-validator chain of its own: for trying the image, not for joining
# a network). Never by default: an empty volume usually means the wrong volume was mounted, and a
# fresh key and chain there would hide that.
#
# `exec`, so that node replaces this shell and receives the stop signal itself.
set -eu

app=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
home=${CHAIN_NODE_HOME:?CHAIN_NODE_HOME must name the node home}

if [ "$#" -eq 0 ] || [ "$1" = "start" ]; then
  [ "$#" -gt 0 ] && shift
  if [ ! -f "$home/genesis.json" ]; then
    if [ "${CHAIN_NODE_INIT:-}" = "1" ]; then
      node "$app/bin/chain-node.js" init --home "$home"
    else
      echo "chain-node: $home holds no genesis.json: mount a node home there (docs/deployment.md), or set CHAIN_NODE_INIT=1 to create a one-validator chain of its own" >&2
      exit 2
    fi
  fi
  exec node "$app/bin/chain-node.js" start --home "$home" "$@"
fi
exec node "$app/bin/chain-node.js" "$@"
