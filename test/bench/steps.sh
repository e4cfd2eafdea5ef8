#!/usr/bin/env bash
# Benchmark of small steps: what a step costs beside its rows.  One session
# runs a tumbling 1 minute pipeline (count + sum, 1000 keys) the way the
# worker runs it on a trickle of commits: for each size in SIZES, STEPS
# times, it inserts and commits that many rows, then calls process() and
# commits.  Only process() and its commit are timed.  It prints, for each
# size, the median over RUNS runs (min and max) of the time a step takes,
# and that time per row.  Every row must be in a window at the end.
#
#   test/bench/steps.sh
#   SIZES="1 10" STEPS=500 RUNS=1 test/bench/steps.sh
set -euo pipefail

# shellcheck source=test/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

SIZES=${SIZES:-"1 100 1000"}
STEPS=${STEPS:-1000}
RUNS=${RUNS:-3}

setup_cluster() {
	start_temp_cluster
	restart_with "windowing.max_workers = 0
timezone = 'UTC'"
	sql >/dev/null <<SQL
CREATE EXTENSION windowing;
CREATE TABLE q (k int, ts timestamptz, v int);
-- n steps of "size" rows each, rows 1 ms of event time apart: the total
-- of their time from process() to its commit, in ms
CREATE PROCEDURE steps(n int, size int, INOUT ms float8 DEFAULT 0) LANGUAGE plpgsql AS \$\$
DECLARE
	t0 timestamptz;
	next bigint := 0;
BEGIN
	FOR i IN 1..n LOOP
		INSERT INTO q SELECT 1 + (next + j) % 1000,
			timestamptz '2026-01-01 00:00:00+00' + (next + j) * interval '1 millisecond', 1
		FROM generate_series(1, size) j;
		next := next + size;
		COMMIT;
		t0 := clock_timestamp();
		PERFORM windowing.process('p');
		COMMIT;
		ms := ms + extract(epoch FROM clock_timestamp() - t0) * 1000;
	END LOOP;
END
\$\$;
SQL
}

# Prints the milliseconds $STEPS steps of $1 rows took, after checking
# that every row was counted.
run() {
	local ms
	sql >/dev/null <<SQL
SELECT windowing.drop_pipeline(name, true) FROM windowing.pipelines;
TRUNCATE q;
SELECT windowing.create_pipeline('p', 'q', 'ts', '{k}', windowing.tumbling('1 minute'),
	'count(*) AS n, sum(v) AS total', start => false, retention => 'consume');
CHECKPOINT;
SQL
	ms=$(sql -c "CALL steps($STEPS, $1)")
	sql -c "SELECT windowing.flush('p')" >/dev/null
	[ "$(sql -c 'SELECT sum(n) FROM p_results')" = $((STEPS * $1)) ] ||
		{ say "FAIL: rows missing from the results"; exit 1; }
	echo "$ms"
}

main() {
	need_packages
	build_and_install
	setup_cluster
	echo "$STEPS steps of each size, each after its rows' commit; $RUNS runs; tumbling 1 minute, count + sum, 1000 keys"
	printf '%-14s %22s %14s\n' "rows a step" "ms a step (min-max)" "µs a row"
	local size times med min max
	for size in $SIZES; do
		times=""
		for ((r = 0; r < RUNS; r++)); do
			times+="$(run "$size") "
		done
		read -r med min max <<<"$(stats "$times")"
		awk -v med="$med" -v min="$min" -v max="$max" -v n="$STEPS" -v size="$size" 'BEGIN {
			printf "%-14d %8.3f (%.3f-%.3f) %14.1f\n", size, med / n, min / n, max / n, med / n / size * 1000 }'
	done
}

main "$@"
