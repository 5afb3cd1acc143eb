#!/usr/bin/env bash
# `wield serve` as users run it (the README's first command: SQLite
# records in sync mode, an INFO log line per call, metrics, events; and
# with --records async) against the official MCP Go SDK, mark3labs/mcp-go
# and a plain net/http + encoding/json handler serving the same echo tool,
# each server a process of its own: MCP tools/call at 1, 8 and 64
# concurrent clients with a raw JSON-RPC client and with the go-sdk's
# client, REST POST /v1/tools/echo/call, tools/list of 1,000 tools, RSS
# idle, after the load, after 100,000 calls and 2 s later, the binary's size, and
# issue 15's targets. Rounds are interleaved (every case on every server
# back to back, round after round) and the tables show medians and
# ratios measured in the same round: the machine is shared and noisy, so
# only those mean anything. Prints Markdown on stdout, a line per case on
# stderr. About 6 minutes on 2 cores with the defaults.
#   bench/serve-peers.sh [rounds]   (default 3 rounds of 2 s per case)
#   SMOKE=1 bench/serve-peers.sh    (every case, 300 calls each, 1 round, 2,000 calls before the last RSS: under a minute)
#   WIELD_BASE=/path/to/old/wield bench/serve-peers.sh [rounds]
#       (A/B: the tree's build against that binary, both started the same
#       way, MCP and REST at c = 8 and 64, ratios within each round;
#       WIELD_AB_ASYNC=1 adds --records async to both)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-3}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/wield" ./cmd/wield
# -mod=mod brings go.mod up to date when the root module's requirements changed.
(cd bench/mcp && GOFLAGS=-mod=mod go build -o "$tmp/serve-peers" ./cmd/serve-peers)
revision=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then revision="$revision with local changes"; fi
args=(-wield "$tmp/wield" -revision "$revision" -rounds "$rounds" -clk-tck "$(getconf CLK_TCK)")
if [ -n "${WIELD_BASE:-}" ]; then
	args+=(-base "$WIELD_BASE")
	if [ "${WIELD_AB_ASYNC:-}" = 1 ]; then args+=(-async); fi
fi
if [ "${SMOKE:-}" = 1 ]; then
	args+=(-rounds 1 -calls 300 -long 2000)
fi
"$tmp/serve-peers" "${args[@]}"
