#!/usr/bin/env bash
# Benchmark of rebuild(): a kept queue of ROWS rows over 1000 keys, out of
# order by up to a day (tumbling 1 minute, count + sum).  The baseline is
# the same pipeline reading the same rows live, in arrival order, from
# another queue holding them in order of time (so that none is late).
# The rebuild is timed in two parts, each in a fresh backend: rebuild()
# itself (which sorts the rows once), then the replay, process() until it
# reads nothing, each step committed, as the worker runs it.  Results are
# checked outside the timings: the rebuilt windows equal the live ones.
#
#   test/bench/rebuild.sh                 # 1,000,000 rows, 3 runs
#   ROWS=200000 RUNS=1 test/bench/rebuild.sh
set -euo pipefail

# shellcheck source=test/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

ROWS=${ROWS:-1000000}
RUNS=${RUNS:-3}

setup() {
	start_temp_cluster
	restart_with "windowing.max_workers = 0
shared_buffers = 256MB
timezone = 'UTC'"
	sql >/dev/null <<SQL
CREATE EXTENSION windowing;
SELECT windowing.create_queue('shuffled', 'k int, ts bigint, v int', retention => 'keep');
SELECT windowing.create_queue('ordered', 'k int, ts bigint, v int', retention => 'keep');
INSERT INTO shuffled (k, ts, v)
  SELECT i % 1000, 1767225600000 + i * 10 - (i::bigint * 7919 % 86400) * 1000, i
  FROM generate_series(1, $ROWS) i;
INSERT INTO ordered (k, ts, v) SELECT k, ts, v FROM shuffled ORDER BY ts, windowing_seq;
VACUUM ANALYZE shuffled;
VACUUM ANALYZE ordered;
CHECKPOINT;
SQL
}

# Pipeline $1 over queue $2, made afresh.
make_pipeline() {
	sql >/dev/null <<SQL
SELECT windowing.drop_pipeline(name, drop_tables => true) FROM windowing.pipelines WHERE name = '$1';
SELECT windowing.create_pipeline('$1', '$2', 'ts', '{k}', windowing.tumbling('1 minute'),
    'count(*) AS n, sum(v) AS s', start => false);
SQL
}

# Seconds that the SQL in $1 takes, in a fresh backend.
timed() {
	sql <<SQL | tail -n 1
SELECT clock_timestamp() AS t0 \gset
$1
SELECT round(extract(epoch FROM clock_timestamp() - :'t0')::numeric, 3);
SQL
}

# process() on pipeline $1 until it reads nothing, each step committed.
drain() {
	echo "DO \$\$ BEGIN LOOP EXIT WHEN windowing.process('$1') = 0; COMMIT; END LOOP; END \$\$;"
}

main() {
	need_packages
	build_and_install
	say "loading $ROWS rows"
	setup
	local live="" order="" replay="" total=""
	for _ in $(seq "$RUNS"); do
		make_pipeline live ordered
		live="$live $(timed "$(drain live)")"
		make_pipeline rebuilt shuffled
		local o r
		o=$(timed "SELECT windowing.rebuild('rebuilt');")
		r=$(timed "$(drain rebuilt)")
		order="$order $o"
		replay="$replay $r"
		total="$total $(awk -v a="$o" -v b="$r" 'BEGIN { printf "%.3f", a + b }')"
	done
	local differences
	differences=$(sql -c "SELECT count(*) FROM ((SELECT k, window_start, n, s FROM live_results
	                        EXCEPT ALL SELECT k, window_start, n, s FROM rebuilt_results)
	                       UNION ALL (SELECT k, window_start, n, s FROM rebuilt_results
	                        EXCEPT ALL SELECT k, window_start, n, s FROM live_results)) d")
	printf '%s rows, %s runs: seconds, median min max\n' "$ROWS" "$RUNS"
	printf '%-34s %s\n' "live read, in order (baseline)" "$(stats "$live")"
	printf '%-34s %s\n' "rebuild(): sorting the rows" "$(stats "$order")"
	printf '%-34s %s\n' "replay: process() until done" "$(stats "$replay")"
	printf '%-34s %s\n' "rebuild and replay" "$(stats "$total")"
	printf 'rebuild and replay / live: %sx; windows differing from live: %s\n' \
		"$(awk -v a="$(stats "$total" | cut -d' ' -f1)" -v b="$(stats "$live" | cut -d' ' -f1)" 'BEGIN { printf "%.1f", a / b }')" \
		"$differences"
}

main "$@"
