#!/usr/bin/env bash
# Recorded calls per second through the engine, for SQLite and PostgreSQL,
# sync and async, at 1 and 64 concurrent callers (issue 3's targets: SQLite
# sync >= 20,000/s at 64, async >= 100,000/s; PostgreSQL sync >= 10,000/s at
# 64), and, with --queries, the queries among 1,000,000 records (slow to
# load: about 40 s per store).
#   bench/store.sh [--queries]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/postgres-up
pattern='BenchmarkRecordedCalls|BenchmarkPostgresCalls'
if [ "${1:-}" = --queries ]; then
	pattern="$pattern|BenchmarkQueryConversation|BenchmarkPostgresQueries"
fi
go test -run '^$' -bench "$pattern" -benchtime 100000x -count 1 -timeout 30m ./internal/storebench/ |
	grep -E '^Benchmark' | awk '{ printf "%-60s", $1; for (i = 3; i <= NF; i += 2) printf " %12s %s", $i, $(i+1); printf "\n" }'
