#!/usr/bin/env bash
# One echo call through the engine against the floor (decode + call +
# encode), measured in the same run, interleaved: prints the median ns/op,
# allocations and the ratio to the floor of each. The machine is shared and
# noisy, so only ratios within one run mean anything.
#   bench/engine.sh [count]   (default 10)
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-10}"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for _ in $(seq "$count"); do
	go test -run '^$' -bench 'BenchmarkFloor$|BenchmarkEngineCall$' -benchmem -count 1 ./engine/ | grep '^Benchmark' >>"$out"
done
awk '
{ name=$1; sub(/-[0-9]+$/, "", name); ns[name]=ns[name] " " $3; allocs[name]=$7 }
function median(list,   a, n, i, j, t) {
	n = split(list, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
END {
	floor = median(ns["BenchmarkFloor"])
	for (n in ns) {
		m = median(ns[n])
		printf "%-36s %12.0f %8s %8.2f\n", n, m, allocs[n], m / floor
	}
}' "$out" | sort | { printf "%-36s %12s %8s %8s\n" benchmark "median ns" allocs ratio; cat; }
