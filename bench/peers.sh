#!/usr/bin/env bash
# One tool call in wield against the same call in the official MCP Go SDK,
# mark3labs/mcp-go and cloudwego/eino (bench/peers, a module of its own):
# BenchmarkCall/<system>/<case>. The test binary is built once; then, count
# times over, each case runs in every system back to back, so that the noise
# of a shared machine falls on all systems alike. Prints a Markdown table of
# the median ns/op, the allocations per call and the ratio of each system to
# wield on the same case (system / wield: above 1, wield is faster).
#   bench/peers.sh [count]   (default 5)
set -euo pipefail
cd "$(dirname "$0")/peers"
count="${1:-5}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# -mod=mod brings go.mod up to date when the root module's requirements changed.
GOFLAGS=-mod=mod go test -c -o "$tmp/peers.test" .
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
cases="echo calculator calculator_invalid fail"
systems="wield wield-inline sdk mcp-go eino wield-mcp"
for _ in $(seq "$count"); do
	for c in $cases; do
		"$tmp/peers.test" -test.run '^$' -test.bench "^BenchmarkCall/[^/]+/$c\$" -test.benchmem -test.count 1 |
			grep '^BenchmarkCall/' >>"$tmp/out"
	done
done
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), load average $load_before before and $(cut -d' ' -f1-3 /proc/loadavg) after, $count runs"
echo
awk -v cases="$cases" -v systems="$systems" '
{ name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkCall\//, "", name); ns[name] = ns[name] " " $3; allocs[name] = $7 }
function median(list,   a, n, i, j, t) {
	n = split(list, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function group(n,   s, r) {
	s = sprintf("%.0f", n); r = ""
	while (length(s) > 3) { r = "," substr(s, length(s) - 2) r; s = substr(s, 1, length(s) - 3) }
	return s r
}
END {
	print "| case | system | median ns/op | allocs/op | system / wield |"
	print "| --- | --- | ---: | ---: | ---: |"
	nc = split(cases, cs, " "); nsys = split(systems, ss, " ")
	for (i = 1; i <= nc; i++) {
		base = median(ns["wield/" cs[i]])
		for (j = 1; j <= nsys; j++) {
			k = ss[j] "/" cs[i]
			if (!(k in ns)) continue
			m = median(ns[k])
			printf "| %s | %s | %s | %s | %.2f |\n", cs[i], ss[j], group(m), allocs[k], m / base
		}
	}
}' "$tmp/out"
