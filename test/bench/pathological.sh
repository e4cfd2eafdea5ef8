#!/usr/bin/env bash
# Benchmark of the inputs whose cost could grow faster than their rows: one
# key's count window of 10,000 rows, sessions kept alive by a long allowed
# lateness, collect() into one big window, cumulating windows, hopping
# windows with allowed lateness, a storm of late rows, and upsert re-fires.
# Each runs at every size of SIZES, beside a plain tumbling pipeline over
# the same number of rows, and prints the time and the backend's peak
# memory (VmHWM, shared buffers it touched included) per size, the time per
# 1000 rows, and how much that grew from the smallest size to the largest:
# a per-row cost that does not depend on the state ("flat") stays within 2x.
#
# Every case is consumed the way the worker consumes a backlog: process()
# until it reads nothing, each step committed (steps end early at
# windowing.step_memory), then flush().  Results are checked outside the
# timings: each case's windows must hold every row as often as the window
# kind says.
#
#   test/bench/pathological.sh                     # 10k and 100k rows
#   SIZES="10000 100000 1000000" test/bench/pathological.sh
#   CASES="session collect" test/bench/pathological.sh
set -euo pipefail

# shellcheck source=test/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

SIZES=${SIZES:-"10000 100000"}
CASES=${CASES:-"tumbling count_10000 count_2000_append session_lateness collect cumulate hop_lateness late_storm refires"}

# assigner | aggregates | options | rows (SQL over i = 1..n) | rows per step
declare -A DEF=(
	[tumbling]="windowing.tumbling('1 minute')|count(*) AS n, sum(v) AS s|allowed_lateness => '0'|1, base + i * interval '100 ms', 1|"
	[count_10000]="windowing.counting(10000, 1)|count(*) AS n, sum(v) AS s|allowed_lateness => '0'|1, base + i * interval '1 ms', 1|"
	[count_2000_append]="windowing.counting(2000, 1)|count(*) AS n, sum(v) AS s|emit => 'append'|1, base + i * interval '1 ms', 1|"
	[session_lateness]="windowing.session('1 second')|count(*) AS n, sum(v) AS s|allowed_lateness => '100 days'|1, base + i * interval '10 s', 1|"
	[collect]="windowing.tumbling('1 day')|windowing.collect(v) AS vs|allowed_lateness => '0'|1, base + i * interval '1 ms', 1|"
	[cumulate]="windowing.cumulating('1 second', '1 hour')|count(*) AS n, sum(v) AS s|allowed_lateness => '0'|1, base + i * interval '10 ms', 1|"
	[hop_lateness]="windowing.hopping('1 hour', '1 second')|count(*) AS n, sum(v) AS s|allowed_lateness => '1 second'|1, base + i * interval '10 ms', 1|"
	[late_storm]="windowing.tumbling('1 minute')|count(*) AS n, sum(v) AS s|allowed_lateness => '0'|1, CASE WHEN i = 1 THEN base + interval '100 days' ELSE base + i * interval '1 ms' END, 1|"
	[refires]="windowing.tumbling('1 minute')|count(*) AS n, sum(v) AS s|allowed_lateness => '1 hour'|i % 100, base + i * interval '100 ms' - CASE WHEN i % 2 = 1 THEN (i::bigint * 7919 % 600) * interval '1 s' ELSE interval '0' END, 1|1000"
)

setup_cluster() {
	start_temp_cluster
	restart_with "windowing.max_workers = 0
shared_buffers = 256MB
timezone = 'UTC'"
	sql -c "CREATE EXTENSION windowing"
}

# Loads the queue of case $1 with $2 rows; prints nothing.
load_case() {
	local name=$1 n=$2 assigner aggs opts rows
	IFS='|' read -r assigner aggs opts rows _ <<<"${DEF[$name]}"
	sql <<SQL
DROP TABLE IF EXISTS q, p_results, p_late CASCADE;
SELECT windowing.drop_pipeline(name) FROM windowing.pipelines;
CREATE TABLE q (k int, ts timestamptz, v int);
SELECT windowing.create_pipeline('p', 'q', 'ts', '{k}', $assigner, '$aggs', $opts,
                                 start => false, retention => 'consume');
INSERT INTO q (k, ts, v)
SELECT $rows FROM generate_series(1, $n) i, (SELECT timestamptz '2026-01-01' AS base) b;
CHECKPOINT;
SQL
}

# Consumes case $1 in a fresh backend; prints "seconds peak_kB".
run_case() {
	local step
	IFS='|' read -r _ _ _ _ step <<<"${DEF[$1]}"
	sql <<SQL | tail -n 1
SELECT clock_timestamp() AS t0 \gset
DO \$\$ BEGIN
    LOOP
        EXIT WHEN windowing.process('p', ${step:-NULL}) = 0;
        COMMIT;
    END LOOP;
END \$\$;
SELECT windowing.flush('p');
SELECT round(extract(epoch FROM clock_timestamp() - :'t0')::numeric, 3) || ' ' ||
       (regexp_match(pg_read_file('/proc/' || pg_backend_pid() || '/status'), 'VmHWM:\s+(\d+)'))[1];
SQL
}

# Every row of the queue counted where it should be: prints "ok" or why not.
check_case() {
	local name=$1 n=$2
	case $name in
	collect) sql -c "SELECT CASE WHEN sum(cardinality(vs)) = $n THEN 'ok' ELSE 'collected ' || sum(cardinality(vs)) END FROM p_results" ;;
	count_*) sql -c "SELECT CASE WHEN count(*) = $n THEN 'ok' ELSE count(*) || ' windows' END FROM (SELECT DISTINCT window_end FROM p_results) w" ;;
	late_storm) sql -c "SELECT CASE WHEN (SELECT count(*) FROM p_late) = $n - 1 THEN 'ok' ELSE 'late rows: ' || (SELECT count(*) FROM p_late) END" ;;
	cumulate | hop_lateness) sql -c "SELECT CASE WHEN (SELECT count(*) FROM p_late) = 0 AND sum(n) > 0 THEN 'ok' ELSE 'late rows' END FROM p_results" ;;
	*) sql -c "SELECT CASE WHEN sum(n) + (SELECT count(*) FROM p_late) = $n THEN 'ok' ELSE 'counted ' || sum(n) END FROM p_results" ;;
	esac
	if [ "$name" = refires ]; then refire_heap; fi
}

# Re-fires' updates, from the statistics the stepping backend sent at its
# exit: "(updates, % HOT, dead rows left, table size)".
refire_heap() {
	sleep 1
	sql -c "SELECT format('(%s upd, %s%% HOT, %s dead, %s)', n_tup_upd,
	                      round(100.0 * n_tup_hot_upd / greatest(n_tup_upd, 1)), n_dead_tup,
	                      pg_size_pretty(pg_total_relation_size(relid)))
	        FROM pg_stat_user_tables WHERE relname = 'p_results'"
}

main() {
	need_packages
	build_and_install
	setup_cluster
	local -a sizes
	read -r -a sizes <<<"$SIZES"
	printf '%-18s' case
	for n in "${sizes[@]}"; do printf '%22s' "$n rows: s / MB"; done
	printf '%14s %10s  %s\n' 'ms/1k rows' growth check
	for name in $CASES; do
		local first="" last="" checks=""
		printf '%-18s' "$name"
		for n in "${sizes[@]}"; do
			load_case "$name" "$n" >/dev/null
			read -r secs kb <<<"$(run_case "$name")"
			printf '%22s' "$secs / $((kb / 1024))"
			per=$(awk -v s="$secs" -v n="$n" 'BEGIN { printf "%.2f", s * 1e6 / n }')
			first=${first:-$per}
			last=$per
			checks="$checks$(check_case "$name" "$n" | tr '\n' ' ')"
		done
		printf '%14s %9sx  %s\n' "$first..$last" \
			"$(awk -v a="$first" -v b="$last" 'BEGIN { printf "%.1f", (a > 0 ? b / a : 0) }')" "$checks"
	done
}

main "$@"
