#!/usr/bin/env bash
# The system calls and the server CPU per call of `wield serve` as users
# run it (an empty folder as HOME and working directory: SQLite records in
# sync mode, an INFO log line per call, metrics, events; its log to a
# file), under MCP tools/call of echo (or REST POST /v1/tools/echo/call)
# from bench/mcp/cmd/calls: counts that depend little on how loaded the
# machine is, where calls/s do. Per run, after 2,000 calls of warm-up: the
# server's utime+stime (/proc/PID/stat) over the measured calls, per call,
# and its system calls per call by kind (perf stat on the raw_syscalls and
# syscalls tracepoints, which cost the server far less than strace does;
# without perf, or without access to the tracepoints, CPU and calls/s
# only). With WIELD_BASE, runs alternate between that binary and the
# tree's build (interleaved pairs), and the table shows medians over the
# runs and the ratio tree/base. Prints Markdown on stdout, a line per run on
# stderr.
#   bench/syscalls.sh [runs] [calls]   (default 5 runs of 30,000 calls)
#   WIELD_BASE=/path/to/old/wield bench/syscalls.sh [pairs] [calls]
#   C=64 (concurrent connections, default 8; at most 90: a client may
#   hold 100 MCP sessions and the warm-up opens 8), REST=1 (REST calls),
#   WIELD_ARGS="--records async" (added to every server's command line).
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
n="${2:-30000}"
c="${C:-8}"
if [ "$c" -lt 1 ] || [ "$c" -gt 90 ]; then
	echo "bench/syscalls.sh: C=$c: use 1 to 90 connections" >&2
	exit 2
fi
tmp=$(mktemp -d)
server=""
cleanup() {
	if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
go build -o "$tmp/wield" ./cmd/wield
# -mod=mod brings go.mod up to date when the root module's requirements changed.
(cd bench/mcp && GOFLAGS=-mod=mod go build -o "$tmp/calls" ./cmd/calls)
builds=("$tmp/wield")
names=(tree)
if [ -n "${WIELD_BASE:-}" ]; then
	builds=("$WIELD_BASE" "$tmp/wield")
	names=(base tree)
fi
rest=()
if [ "${REST:-}" = 1 ]; then rest=(-rest); fi
events="raw_syscalls:sys_enter"
kinds="write read pwrite64 pread64 nanosleep futex epoll_pwait fcntl sched_yield"
for k in $kinds; do events="$events,syscalls:sys_enter_$k"; done
events="$events,context-switches"
perf=1
if ! command -v perf >/dev/null || ! perf stat -x, -o /dev/null -e "$events" true 2>/dev/null; then
	perf=0
	echo "bench/syscalls.sh: perf cannot count the syscall tracepoints here (not installed, or kernel.perf_event_paranoid): CPU and calls/s only" >&2
fi
tck=$(getconf CLK_TCK)
results="$tmp/results"
: >"$results"

# run BIN NAME: one server, warm-up, measured calls; appends "NAME key=value ..." to $results.
run() {
	local bin=$1 name=$2 dir addr t0 t1 out cps line
	dir=$(mktemp -d "$tmp/run.XXXX")
	(cd "$dir" && HOME="$dir" exec "$bin" serve --addr 127.0.0.1:0 --addr-file "$dir/addr" ${WIELD_ARGS:-} 2>"$dir/log") &
	server=$!
	for _ in $(seq 100); do
		if [ -s "$dir/addr" ]; then break; fi
		sleep 0.1
	done
	if [ ! -s "$dir/addr" ]; then
		echo "bench/syscalls.sh: $bin did not start; its log:" >&2
		cat "$dir/log" >&2
		exit 1
	fi
	addr=$(cat "$dir/addr")
	"$tmp/calls" -addr "$addr" -n 2000 -c 8 "${rest[@]}" >/dev/null
	local stat=""
	if [ "$perf" = 1 ]; then
		perf stat -x, -o "$dir/perf" -e "$events" -p "$server" &
		stat=$!
		sleep 0.3 # perf attaches
	fi
	t0=$(awk '{print $14+$15}' "/proc/$server/stat")
	out=$("$tmp/calls" -addr "$addr" -n "$n" -c "$c" "${rest[@]}")
	t1=$(awk '{print $14+$15}' "/proc/$server/stat")
	if [ -n "$stat" ]; then
		kill -INT "$stat"
		wait "$stat" || true
	fi
	kill "$server"
	wait "$server" || true
	server=""
	cps=$(echo "$out" | sed -E 's/.*: ([0-9]+) calls\/s$/\1/')
	line="$name cpu_us=$(((t1 - t0) * 1000000 / tck / n)) calls_per_s=$cps"
	if [ "$perf" = 1 ]; then
		line="$line $(awk -F, -v n="$n" '$1 ~ /^[0-9]+$/ { k = $3; sub(/^raw_syscalls:sys_enter$/, "syscalls", k); sub(/^syscalls:sys_enter_/, "", k); printf "%s=%.3f ", k, $1 / n }' "$dir/perf")"
	fi
	echo "$line" >>"$results"
	echo "$line" >&2
	rm -rf "$dir"
}

for _ in $(seq "$runs"); do
	for i in "${!builds[@]}"; do
		run "${builds[$i]}" "${names[$i]}"
	done
done

revision=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then revision="$revision with local changes"; fi
mode="MCP tools/call"
if [ "${REST:-}" = 1 ]; then mode="REST POST /v1/tools/echo/call"; fi
echo "## wield serve: system calls and CPU per call (bench/syscalls.sh)"
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg) after; tree $revision${WIELD_BASE:+, base $WIELD_BASE}; $mode of echo, c=$c, $runs run(s) of $n calls per build${WIELD_ARGS:+, serve $WIELD_ARGS}; medians; per call: the server's CPU (µs, to a clock tick over the calls)$(if [ "$perf" = 1 ]; then echo " and system calls (perf stat)"; else echo "; system calls not counted (no perf)"; fi)."
echo
awk -v names="${names[*]}" '
function median(list,   a, m, i, j, t) {
	m = split(list, a, " ")
	for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
{
	for (i = 2; i <= NF; i++) {
		split($i, kv, "=")
		if (!(kv[1] in seen)) { seen[kv[1]] = 1; order[++nk] = kv[1] }
		v[$1, kv[1]] = v[$1, kv[1]] " " kv[2]
	}
}
END {
	nb = split(names, b, " ")
	printf "| median |"; for (i = 1; i <= nb; i++) printf " %s |", b[i]; if (nb == 2) printf " tree/base |"; printf "\n"
	printf "| --- |"; for (i = 1; i <= nb + (nb == 2); i++) printf " ---: |"; printf "\n"
	for (k = 1; k <= nk; k++) {
		key = order[k]
		printf "| %s |", key
		f = (key == "cpu_us" || key == "calls_per_s") ? "%.0f" : "%.3f"
		for (i = 1; i <= nb; i++) { m[i] = median(v[b[i], key]); printf " " f " |", m[i] }
		if (nb == 2) printf " %s |", (m[1] > 0) ? sprintf("%.2f", m[2] / m[1]) : "-"
		printf "\n"
	}
}' "$results"
