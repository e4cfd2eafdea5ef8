#!/usr/bin/env bash
# A trickle of small commits: pgbench inserts RATE single-row transactions
# per second into one queue, for SECONDS_RUN seconds, while the background
# worker runs PIPELINES pipelines on it (tumbling 1 minute, count + sum, 1000
# keys).  It prints the CPU time of the extension's processes (the worker
# and the launcher, read from /proc) as a share of one core, and, as the
# baseline measured over the same interval, the CPU time of the backend
# that inserted the rows.  Every row must be consumed by every pipeline.
#
# It runs once for each value of windowing.worker_round_interval in
# ROUND_INTERVALS (ms), which batches the commits of that long into one
# round of steps.
#
#   test/bench/trickle.sh
#   RATE=500 PIPELINES=1 SECONDS_RUN=20 ROUND_INTERVALS=0 test/bench/trickle.sh
set -euo pipefail

# shellcheck source=test/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

RATE=${RATE:-200}
PIPELINES=${PIPELINES:-4}
SECONDS_RUN=${SECONDS_RUN:-60}
ROUND_INTERVALS=${ROUND_INTERVALS:-"0 20"}

# CPU seconds (user + system) of the processes whose pids are in $1.
cpu_seconds() {
	local total=0 pid ticks
	for pid in $1; do
		ticks=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0)
		total=$((total + ticks))
	done
	awk -v t="$total" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f", t / hz }'
}

main() {
	need_packages
	build_and_install
	start_temp_cluster
	restart_with "timezone = 'UTC'"
	sql >/dev/null <<SQL
CREATE EXTENSION windowing;
SELECT windowing.create_queue('clicks', 'k int, ts timestamptz, v int');
SELECT windowing.create_pipeline('p' || i, 'clicks', 'ts', '{k}', windowing.tumbling('1 minute'),
                                 'count(*) AS n, sum(v) AS s')
FROM generate_series(1, $PIPELINES) i;
SQL
	local script="$DIR/insert.sql"
	echo "INSERT INTO clicks VALUES ((random() * 999)::int, clock_timestamp(), 1);" >"$script"
	chmod a+r "$script"
	sleep 2
	local interval
	for interval in $ROUND_INTERVALS; do
		sql -c "ALTER SYSTEM SET windowing.worker_round_interval = '${interval}ms'" >/dev/null
		sql -c "SELECT pg_reload_conf()" >/dev/null
		sleep 1
		run_once "$script" "$interval"
	done
}

# One run of pgbench with the script $1, the round interval being $2 ms.
run_once() {
	local script=$1 interval=$2
	local workers producer wb pb wa pa
	workers=$(sql -c "SELECT string_agg(pid::text, ' ') FROM pg_stat_activity
	                  WHERE backend_type LIKE 'windowing%'")
	say "$RATE single-row commits per second for $SECONDS_RUN s, $PIPELINES pipelines"
	as_server_user "$PGBIN/pgbench" -h "$PGHOST" -U postgres -n -c 1 -R "$RATE" -T "$SECONDS_RUN" \
		-f "$script" postgres >"$DIR/pgbench.log" 2>&1 &
	sleep 2
	producer=$(sql -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench'")
	wb=$(cpu_seconds "$workers")
	pb=$(cpu_seconds "$producer")
	# the same interval for both, while the producer's backend lives
	local span=$((SECONDS_RUN - 4))
	sleep "$span"
	wa=$(cpu_seconds "$workers")
	pa=$(cpu_seconds "$producer")
	wait
	sleep 2
	local total consumed worker_cpu producer_cpu
	total=$(sql -c "SELECT count(*) FROM clicks")
	consumed=$(sql -c "SELECT min(rows_consumed) FROM windowing.pipeline_stats")
	worker_cpu=$(awk -v a="$wb" -v b="$wa" 'BEGIN { printf "%.2f", b - a }')
	producer_cpu=$(awk -v a="$pb" -v b="$pa" 'BEGIN { printf "%.2f", b - a }')
	printf '%s commits/s, %s pipelines, round interval %s ms: %s rows in the queue, the pipelines consumed %s of them\n' \
		"$RATE" "$PIPELINES" "$interval" "$total" "$consumed"
	printf 'over %s s: worker and launcher %s s of CPU (%s%% of one core); the producing backend %s s (%s%%); ratio %sx\n' \
		"$span" "$worker_cpu" "$(awk -v c="$worker_cpu" -v s="$span" 'BEGIN { printf "%.1f", 100 * c / s }')" \
		"$producer_cpu" "$(awk -v c="$producer_cpu" -v s="$span" 'BEGIN { printf "%.1f", 100 * c / s }')" \
		"$(awk -v a="$worker_cpu" -v b="$producer_cpu" 'BEGIN { printf "%.1f", (b > 0 ? a / b : 0) }')"
	grep -E "^tps|latency average" "$DIR/pgbench.log" || true
}

main "$@"
