#!/usr/bin/env bash
# POST /v1/tools/echo/call at 8 and 64 concurrent clients, records in SQLite
# in sync and async mode, against a plain net/http JSON handler measured in
# the same run (issue 8: at least 0.5x the reference in sync mode, 0.8x in
# async mode). Prints, per case, the median of x_reference (wield's
# throughput over the reference's) over the runs, and every run's value.
# The machine is shared and noisy: only ratios within one run mean anything.
#   bench/serve.sh [count] [requests]   (default 5 runs of 40000 requests)
set -euo pipefail
cd "$(dirname "$0")/.."
count="${1:-5}"
n="${2:-40000}"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
go test -c -o "$out.test" ./httpapi/
for _ in $(seq "$count"); do
	(cd httpapi && "$out.test" -test.run '^$' -test.bench 'BenchmarkServeEcho' -test.benchtime "${n}x") | grep '^Benchmark' >>"$out"
done
rm -f "$out.test"
awk '
{ name=$1; sub(/-[0-9]+$/, "", name); for (i = 2; i < NF; i++) if ($(i+1) == "x_reference") r[name] = r[name] " " $i }
function median(list,   a, n, i, j, t) {
	n = split(list, a, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
END { for (n in r) printf "%-44s %6.2f   (%s )\n", n, median(r[n]), r[n] }' "$out" | sort |
	{ printf "%-44s %6s   %s\n" benchmark median "x_reference of each run"; cat; }
