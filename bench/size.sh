#!/usr/bin/env bash
# What wield's binary is made of: its loaded sections, and its symbols'
# bytes by module, largest first (bench/mcp/cmd/binsize). The binary is
# built as bench/serve-peers.sh and TestJourneyBinarySize build it
# (`go build -o`); a module's share of the function table (.gopclntab)
# grows with its text and is not counted in its line.
#   bench/size.sh [modules]   (default 30)
#   bench/size.sh 30 /path/to/wield   (an existing binary instead)
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bin="${2:-}"
if [ -z "$bin" ]; then
	bin="$tmp/wield"
	go build -o "$bin" ./cmd/wield
fi
(cd bench/mcp && go build -o "$tmp/binsize" ./cmd/binsize)
"$tmp/binsize" -n "${1:-30}" "$bin"
