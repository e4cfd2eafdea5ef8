#!/usr/bin/env bash
# Parallelism on one server: ROWS rows of KEYS keys over one hour of event
# time are put in a queue, then a pipeline with parallelism 1, and the same
# pipeline with parallelism 2, each on its own (paused while the rows go
# in, then resumed), consume them through the background workers: one
# worker per part.  For each shape it prints the elapsed time from the
# resume to the moment every part has read every row, the rows per second,
# and the ratio of parallelism 2 to 1 (above 1: faster), RUNS times each
# (median, min and max).  Shapes: tumbling 1 minute count + sum; sessions
# with a 1-minute gap; hopping windows of 10 minutes sliding by 1 minute
# (10 windows a row) in append mode, which writes a result row per window
# and key.  STEP_MEMORY sets windowing.step_memory (the default is
# maintenance_work_mem): a step that allocates that much ends early, and
# the next goes on, which at 100,000 keys of hopping windows cuts a single
# part's steps short more often than each of two parts'.
#
#   test/bench/scale.sh
#   ROWS=2000000 KEYS=100000 RUNS=3 SHAPES="tumbling session" test/bench/scale.sh
#   SHAPES=hopping STEP_MEMORY=1GB test/bench/scale.sh
set -euo pipefail

# shellcheck source=test/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

ROWS=${ROWS:-1000000}
KEYS=${KEYS:-100000}
RUNS=${RUNS:-3}
SHAPES=${SHAPES:-"tumbling session hopping"}
STEP_MEMORY=${STEP_MEMORY:-}

# Seconds from the resume of pipeline "p" of shape $1 with parallelism $2
# to every part having read the queue.
one_run() {
	local shape=$1 parallelism=$2 start end
	sql >/dev/null <<SQL
SELECT windowing.create_pipeline('p', 'events', 'ts', '{k}', $(bench_shape "$shape"),
    max_out_of_orderness => '10 seconds', start => false, parallelism => $parallelism);
CHECKPOINT;
SQL
	start=$(date +%s.%N)
	sql -c "SELECT windowing.resume_pipeline('p')" >/dev/null
	until [ "$(sql -c "SELECT count(*) FILTER (WHERE rows_consumed = $ROWS AND tick_hi IS NULL) = $parallelism
	                   FROM windowing.pipeline WHERE name = 'p'")" = t ]; do
		sleep 0.05
	done
	end=$(date +%s.%N)
	sql -c "SELECT windowing.drop_pipeline('p', drop_tables => true)" >/dev/null
	awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }'
}

main() {
	need_packages
	build_and_install
	start_temp_cluster
	restart_with "shared_buffers = 1GB
windowing.state_memory = 2GB
windowing.poll_interval = 10
timezone = 'UTC'
max_wal_size = 8GB${STEP_MEMORY:+
windowing.step_memory = '$STEP_MEMORY'}"
	say "$ROWS rows of $KEYS keys in the queue"
	sql >/dev/null <<SQL
CREATE EXTENSION windowing;
SELECT windowing.create_queue('events', 'k int, ts timestamptz, v int', retention => 'keep');
INSERT INTO events (k, ts, v)
SELECT (g::bigint * 7919) % $KEYS, '2026-01-01 00:00+00'::timestamptz + g * (interval '1 hour' / $ROWS), g % 10
FROM generate_series(1, $ROWS) g;
VACUUM ANALYZE events;
SQL
	local shape p run
	printf '%-9s %8s %8s %8s %12s %8s\n' shape parallel seconds min-max rows/s ratio
	for shape in $SHAPES; do
		declare -A times=()
		for run in $(seq "$RUNS"); do
			for p in 1 2; do
				times[$p]="${times[$p]:-} $(one_run "$shape" "$p")"
			done
		done
		local one
		one=$(stats "${times[1]}" | cut -d' ' -f1)
		for p in 1 2; do
			read -r med lo hi <<<"$(stats "${times[$p]}")"
			printf '%-9s %8s %8s %8s %12s %8s\n' "$shape" "$p" "$med" "$lo-$hi" \
				"$(awk -v r="$ROWS" -v s="$med" 'BEGIN { printf "%.0f", r / s }')" "$(ratio "$one" "$med")"
		done
		unset times
	done
}

main "$@"
