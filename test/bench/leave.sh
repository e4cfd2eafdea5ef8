#!/usr/bin/env bash
# Benchmark of windows that fire and leave all at once: one window per key
# (tumbling 1 minute, count + sum, upsert mode with 1 hour of allowed
# lateness), for SIZES keys, consumed in one session (whose memory holds
# the state, as the worker's does).  Two steps are timed:
#
#   fire    one row takes the watermark past the minute: every window
#           fires, its result row inserted, and stays for late rows
#   leave   one row takes the watermark past the lateness: every window
#           leaves, its result row marked final (is_final)
#
# each against what the same writes cost in plain SQL on a table like the
# result table, in the same run: INSERT ... SELECT of the windows' rows
# (GROUP BY over the same rows) for "fire", and UPDATE ... SET is_final =
# true of all its rows for "leave".  Ratios are times (pipeline / SQL,
# above 1 means slower than the SQL).  It prints milliseconds and
# microseconds per window, and checks that every window's row is there
# and final.
#
#   test/bench/leave.sh                          # 10,000 and 200,000 windows
#   SIZES="10000 200000 1000000" test/bench/leave.sh
set -euo pipefail

# shellcheck source=test/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

SIZES=${SIZES:-"10000 200000"}

setup_cluster() {
	start_temp_cluster
	restart_with "windowing.max_workers = 0
windowing.state_memory = 1GB
shared_buffers = 512MB
timezone = 'UTC'"
	sql -c "CREATE EXTENSION windowing"
}

# Prints "fire_ms leave_ms sql_insert_ms sql_update_ms check" for $1 windows.
run() {
	sql <<SQL | tail -n 1
DROP TABLE IF EXISTS q, p_results, p_late, sql_results CASCADE;
SELECT windowing.drop_pipeline(name) FROM windowing.pipelines;
CREATE TABLE q (k int, ts timestamptz, v int);
SELECT windowing.create_pipeline('p', 'q', 'ts', '{k}', windowing.tumbling('1 minute'),
                                 'count(*) AS n, sum(v) AS s', allowed_lateness => '1 hour',
                                 start => false, retention => 'keep');
INSERT INTO q SELECT i, timestamptz '2026-01-01 00:00:10', 1 FROM generate_series(1, $1) i;
-- a step stops at windowing.step_memory: steps until every row is read
DO \$\$ BEGIN WHILE windowing.process('p') > 0 LOOP COMMIT; END LOOP; END \$\$;
CHECKPOINT;
CREATE TEMP TABLE t (what text, ms float8);
CREATE FUNCTION pg_temp.timed(what text, statement text) RETURNS void LANGUAGE plpgsql AS \$\$
DECLARE
    t0 timestamptz := clock_timestamp();
BEGIN
    EXECUTE statement;
    INSERT INTO t VALUES (what, extract(epoch FROM clock_timestamp() - t0) * 1000);
END \$\$;
INSERT INTO q VALUES (0, timestamptz '2026-01-01 00:05:00', 0);
SELECT pg_temp.timed('fire', \$s\$SELECT windowing.process('p')\$s\$);
INSERT INTO q VALUES (0, timestamptz '2026-01-01 02:00:00', 0);
SELECT pg_temp.timed('leave', \$s\$SELECT windowing.process('p')\$s\$);
CREATE TABLE sql_results (LIKE p_results INCLUDING ALL);
CHECKPOINT;
SELECT pg_temp.timed('insert', \$s\$
    INSERT INTO sql_results
    SELECT k, date_bin('1 minute', ts, timestamptz '2026-01-01'),
           date_bin('1 minute', ts, timestamptz '2026-01-01') + interval '1 minute',
           date_bin('1 minute', ts, timestamptz '2026-01-01') + interval '1 minute' - interval '1 microsecond',
           count(*), sum(v), 1, false, now()
    FROM q WHERE ts < timestamptz '2026-01-01 00:01' GROUP BY 1, 2\$s\$);
SELECT pg_temp.timed('update', 'UPDATE sql_results SET is_final = true');
SELECT string_agg(round(ms)::text, ' ' ORDER BY ord) || ' ' ||
       CASE WHEN (SELECT count(*) FILTER (WHERE is_final AND n = 1 AND k > 0) FROM p_results) = $1
            THEN 'ok' ELSE 'wrong' END
FROM t JOIN (VALUES ('fire', 1), ('leave', 2), ('insert', 3), ('update', 4)) o(what, ord) USING (what);
SQL
}

us_per() { awk -v ms="$1" -v n="$2" 'BEGIN { printf "%.1f", ms * 1000 / n }'; }

main() {
	need_packages
	build_and_install
	setup_cluster
	printf '%-10s %-22s %-22s %-22s %-22s %8s %8s  %s\n' windows 'fire ms (us/window)' 'SQL INSERT ms' \
		'leave ms (us/window)' 'SQL UPDATE ms' 'fire' 'leave' check
	for n in $SIZES; do
		read -r fire leave insert update ok <<<"$(run "$n")"
		printf '%-10s %-22s %-22s %-22s %-22s %7sx %7sx  %s\n' "$n" \
			"$fire ($(us_per "$fire" "$n"))" "$insert ($(us_per "$insert" "$n"))" \
			"$leave ($(us_per "$leave" "$n"))" "$update ($(us_per "$update" "$n"))" \
			"$(ratio "$fire" "$insert")" "$(ratio "$leave" "$update")" "$ok"
	done
}

main "$@"
