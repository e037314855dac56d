#!/bin/sh
# Sets up the homes of a network of validators by the genesis flow of issue 19 (docs/deployment.md):
# each validator makes its own key and prints its entry, the entries are collected into one
# genesis.json, and every home gets that genesis and the others as bootstrap peers. Keys stay in
# their homes; only the entries (address, stake, announce address) are read across homes.
#
#   compose-setup.sh [HOMES_DIR]    homes are HOMES_DIR/<name> (default /homes, as docker-compose.yml mounts them)
#
# Environment: VALIDATORS (names, also their host names; default validator0..validator3),
# CHAIN_ID (default 101), P2P_PORT (default 26656, the port every validator listens on).
# Runs the same by hand, e.g. VALIDATORS="a b" compose-setup.sh ./homes, with chain-node's Node 24
# as `node` on PATH; in compose, `docker compose up` runs it in the one-shot `setup` service.
#
# Compose runs it at every `up`: homes already set up are left as they are (a validator's key is
# never replaced), and a half-done setup is refused rather than guessed at.
set -eu

app=$(CDPATH='' cd -- "$(dirname -- "$0")/.." && pwd)
chain_node() { node "$app/bin/chain-node.js" "$@"; }
homes=${1:-/homes}
validators=${VALIDATORS:-validator0 validator1 validator2 validator3}
chain_id=${CHAIN_ID:-101}
port=${P2P_PORT:-26656}
done_marker=.compose-setup-done

set_up=0
started=0
total=0
for name in $validators; do
  total=$((total + 1))
  if [ -f "$homes/$name/$done_marker" ]; then set_up=$((set_up + 1)); fi
  if [ -e "$homes/$name/validator-entry.json" ] || [ -e "$homes/$name/genesis.json" ]; then
    started=$((started + 1))
  fi
done
if [ "$set_up" -eq "$total" ]; then
  echo "compose-setup: the $total homes in $homes are already set up"
  exit 0
fi
if [ "$started" -ne 0 ]; then
  echo "compose-setup: $started of the $total homes in $homes are half set up (a key without the shared genesis); remove them (docker compose down -v) and run again" >&2
  exit 1
fi

# 1. Each validator: a key and an entry (what another operator would send you), announced at the
#    host name its peers reach it by.
for name in $validators; do
  chain_node init --home "$homes/$name" --chain-id "$chain_id" \
    --p2p-host 0.0.0.0 --p2p-announce "/dns4/$name/tcp/$port" >/dev/null
done

# 2. One genesis from every entry: the first validator's home assembles it (its own entry is in
#    its genesis already); the others install it in step 3.
first=""
entries=""
for name in $validators; do
  if [ -z "$first" ]; then first=$name; else entries="$entries $homes/$name/validator-entry.json"; fi
done
# shellcheck disable=SC2086 # the entries are separate arguments
chain_node genesis add-validator --home "$homes/$first" $entries >/dev/null
shared="$homes/$first/genesis.json"

# The multiaddr with /p2p/<peer id> that an entry announces: what the others put in `bootstrap`.
peer_addr() {
  # shellcheck disable=SC2016 # JavaScript, not shell: its ${…} are template literals
  node -e '
    const [file, name] = process.argv.slice(1);
    const strings = [];
    const walk = (v) => typeof v === "string" ? strings.push(v) : v && typeof v === "object" && Object.values(v).forEach(walk);
    walk(JSON.parse(require("node:fs").readFileSync(file, "utf8")));
    const addr = strings.find((s) => s.startsWith(`/dns4/${name}/`) && s.includes("/p2p/"));
    if (addr === undefined) {
      console.error(`compose-setup: ${file} announces no /dns4/${name}/…/p2p/<peer id> address`);
      process.exit(1);
    }
    console.log(addr);
  ' "$1" "$2"
}

# 3. Every home: the shared genesis, the other validators as bootstrap peers.
for name in $validators; do
  bootstrap=""
  for other in $validators; do
    [ "$other" = "$name" ] && continue
    bootstrap="$bootstrap $(peer_addr "$homes/$other/validator-entry.json" "$other")"
  done
  # shellcheck disable=SC2086 # the multiaddrs are separate arguments
  # shellcheck disable=SC2086 # the multiaddrs are separate arguments
  chain_node genesis install --home "$homes/$name" --genesis "$shared" --bootstrap $bootstrap >/dev/null
  # In the image this runs as root, to write into fresh volumes; the node runs as chain-node.
  if [ "$(id -u)" = 0 ] && id chain-node >/dev/null 2>&1; then chown -R chain-node:chain-node "$homes/$name"; fi
  touch "$homes/$name/$done_marker"
done
echo "compose-setup: $total validators set up in $homes, chain id $chain_id"
