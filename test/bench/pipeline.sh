#!/usr/bin/env bash
# Benchmark of pipelines: how fast windowing.process() consumes a queue,
# against what fills the queue and what reads it without the extension.
# Every contender gets the same rows, loaded fresh into the queue table
# before it is timed (a producer's COPY is what a pipeline must keep up
# with):
#
#   COPY into the queue       the producer: COPY of the rows into a queue
#                             prepared by create_pipeline (xid, arrival
#                             number, index); the baseline
#   tumbling pipeline         1 minute windows, count(*) and sum(value) per
#                             key, 2 s out-of-orderness: one process() call
#                             consuming the whole queue, then flush(); its
#                             tick is read by a helper process (the
#                             default for a tick this big), and, as
#                             "tumbling1", by the step itself
#                             (windowing.read_helper_rows = 0)
#   read floor                SELECT count(*), sum(value) FROM queue
#   batch SQL                 INSERT INTO results SELECT key, date_bin(...),
#                             count(*), sum(value) FROM queue GROUP BY 1, 2
#                             (both also in one process, without parallel
#                             workers, against tumbling1)
#   hopping pipeline          1 minute windows every second: 60 per row
#   hopping results' COPY     binary COPY of the hopping pipeline's result
#                             rows into a table like its result table (same
#                             columns, same unique index): what writing its
#                             windows costs without computing them; and into
#                             the same table without the index.  The
#                             difference is what keeping the index costs,
#                             which any upsert pipeline writing these
#                             windows pays; it bounds the hopping ratio
#   hopping in append mode    the same pipeline with emit => 'append', whose
#                             result table has no index: no window fires
#                             twice here, so it writes the same rows, and
#                             its baseline is the COPY without the index
#   session pipeline          sessions of 10 s gap per key
#   tumbling in steps         the tumbling pipeline in STEPS steps (one
#                             transaction each, as the worker runs it), with
#                             window state in memory, and with
#                             windowing.state_memory so small that the steps
#                             read it back from the heap as they need it (the
#                             two take turns going first)
#
# The rows: ROWS events of 1000 keys over one hour of event time, in order
# up to 2 s of disorder (row i at 2026-01-01 + i * 3600 / ROWS seconds plus
# a random 0-2 s), generated once into a file.  Every pipeline's results are
# checked, outside the timings: tumbling windows against the batch query,
# hopping windows by their sums (every row is in 60 windows), sessions by
# their count and sums, spilled state against state in memory; the script
# fails on any difference.  It prints
# the median, min and max time of RUNS runs, rows per second and the ratios
# (speeds, above 1 means faster), then the window state's size per open
# window, taken halfway through the queue, and the largest size the queue
# table reached.
#
# Run it from anywhere, as root or as a user with sudo:
#
#   test/bench/pipeline.sh                    # 5 million rows, 3 runs
#   ROWS=1000000 RUNS=1 test/bench/pipeline.sh
#
# HOP_ROWS runs the hopping pipeline on the first HOP_ROWS rows only (all
# of them by default); its ratio is then one of rows per second.  STEPS
# (default 100) sets the number of steps of the stepped runs.

set -euo pipefail

# shellcheck source=test/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

ROWS=${ROWS:-5000000}
RUNS=${RUNS:-3}
HOP_ROWS=${HOP_ROWS:-$ROWS}
STEPS=${STEPS:-100}
KEYS=1000
TINY_STATE_MEMORY=8kB
SETTINGS="SET work_mem = '256MB';
SET windowing.step_memory = '64GB';
SET TimeZone = 'UTC';"
PIPELINE_ARGS="'queue', 'ts', '{key}', %s,
	'count(*) AS n, sum(value) AS total',
	max_out_of_orderness => '2 seconds', start => false"

declare -A TIMES
PEAK_QUEUE=0

# The cluster, with no background workers to race process().
setup_cluster() {
	start_temp_cluster
	restart_with "windowing.max_workers = 0"
}

# Writes the first $2 of the ROWS rows to file $1: the same rows whatever $2.
write_rows() {
	sql <<SQL
SELECT setseed(0.5);
COPY (SELECT 1 + floor(random() * $KEYS)::int,
		timestamptz '2026-01-01 00:00:00+00' + i * 3600.0 / $ROWS * interval '1 second'
			+ random() * interval '2 seconds',
		floor(random() * 1000)::int
	FROM generate_series(1, $2) i) TO '$1';
SQL
}

# The rows, the queue (prepared by a pipeline dropped at once) and the
# expected results of the tumbling pipeline.
prepare() {
	say "generating $ROWS rows"
	ROWS_FILE=$DIR/rows.copy
	HOP_FILE=$DIR/hop_rows.copy
	sql -c 'CREATE EXTENSION windowing' >/dev/null
	write_rows "$ROWS_FILE" "$ROWS" >/dev/null
	if [ "$HOP_ROWS" = "$ROWS" ]; then HOP_FILE=$ROWS_FILE; else write_rows "$HOP_FILE" "$HOP_ROWS" >/dev/null; fi
	# shellcheck disable=SC2059
	sql >/dev/null <<SQL
CREATE TABLE queue (key int, ts timestamptz, value int);
-- autovacuum would run in the middle of the timings
ALTER TABLE queue SET (autovacuum_enabled = false);
SELECT windowing.create_pipeline('p', $(printf "$PIPELINE_ARGS" "windowing.tumbling('1 minute')"), retention => 'consume');
SELECT windowing.drop_pipeline('p', true);
SQL
	load_queue "$ROWS_FILE"
	sql <<SQL
$SETTINGS
CREATE TABLE expected AS
SELECT key, date_bin('1 minute', ts, '1970-01-01') AS minute, count(*) AS n, sum(value) AS total
FROM queue GROUP BY 1, 2;
SQL
}

track_queue_size() {
	local size
	size=$(sql -c "SELECT pg_total_relation_size('queue')")
	((size > PEAK_QUEUE)) && PEAK_QUEUE=$size
	return 0
}

empty_queue() {
	sql -c 'TRUNCATE queue' -c 'CHECKPOINT'
}

# A fresh queue holding the rows of file $1.
load_queue() {
	empty_queue
	sql -c "COPY queue (key, ts, value) FROM '$1'" -c 'ANALYZE queue' -c 'CHECKPOINT'
	track_queue_size
}

# A fresh pipeline p on the queue with assigner $1 (and create_pipeline's
# further arguments $2, if any).
new_pipeline() {
	# shellcheck disable=SC2059
	sql >/dev/null <<SQL
SELECT windowing.drop_pipeline(name, true) FROM windowing.pipelines;
SELECT windowing.create_pipeline('p', $(printf "$PIPELINE_ARGS" "$1"), retention => 'consume'${2:+, $2});
CHECKPOINT;
SQL
}

# Runs psql script $1 in a new session; prints the total of its timed
# statements in seconds, then what it printed.
time_sql() {
	local out
	out=$(sql -F ' ' <<SQL
$SETTINGS
\timing on
$1
SQL
)
	grep -q '^Time: ' <<<"$out" || { say "no timing in: $out"; exit 1; }
	sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$out" |
		awk '{ ms += $1 } END { printf "%.3f\n", ms / 1000 }'
	grep -v '^Time: ' <<<"$out" || true
}

# Times psql script $2 as contender $1; what it printed goes to OUTPUT.
measure() {
	local out
	out=$(time_sql "$2")
	TIMES[$1]+="$(head -1 <<<"$out") "
	say "  $1: $(head -1 <<<"$out") s"
	OUTPUT=$(tail -n +2 <<<"$out")
}

fail() {
	say "FAIL: $*"
	exit 1
}

# Rows of query $1 not in query $2 and the other way round: none, or fail.
same_rows() {
	local diff
	diff=$(sql -c "SELECT (SELECT count(*) FROM ($1 EXCEPT ALL $2) a)
		+ (SELECT count(*) FROM ($2 EXCEPT ALL $1) b)")
	[ "$diff" = 0 ] || fail "$3: $diff rows differ"
}

# The tumbling pipeline's results are the batch query's, fired once, final,
# with no late rows.
check_tumbling() {
	same_rows "SELECT key, window_start, n, total FROM p_results" \
		"SELECT key, minute, n, total FROM expected" "$1 against the batch query"
	[ "$(sql -c "SELECT count(*) FROM p_results WHERE fire_count <> 1 OR NOT is_final")" = 0 ] ||
		fail "$1: windows fired more than once or not final"
	[ "$(sql -c 'SELECT count(*) FROM p_late')" = 0 ] || fail "$1: late rows"
}

time_copy() {
	empty_queue
	measure copy "COPY queue (key, ts, value) FROM '$ROWS_FILE';"
	track_queue_size
}

time_tumbling() {
	load_queue "$ROWS_FILE"
	new_pipeline "windowing.tumbling('1 minute')"
	measure tumbling "SELECT windowing.process('p');
SELECT windowing.flush('p');"
	check_tumbling "tumbling pipeline"
	TUMBLING_WINDOWS=$(sql -c 'SELECT count(*) FROM p_results')
	load_queue "$ROWS_FILE"
	new_pipeline "windowing.tumbling('1 minute')"
	measure tumbling1 "SET windowing.read_helper_rows = 0;
SELECT windowing.process('p');
SELECT windowing.flush('p');"
	check_tumbling "tumbling pipeline in one process"
}

time_floor() {
	load_queue "$ROWS_FILE"
	measure floor "SELECT count(*), sum(value) FROM queue;"
	measure floor1 "SET max_parallel_workers_per_gather = 0;
SELECT count(*), sum(value) FROM queue;"
}

time_batch() {
	load_queue "$ROWS_FILE"
	sql -c 'DROP TABLE IF EXISTS results' -c 'CREATE TABLE results (key int, minute timestamptz, n bigint, total bigint)' -c 'CHECKPOINT'
	measure batch "INSERT INTO results
SELECT key, date_bin('1 minute', ts, '1970-01-01'), count(*), sum(value)
FROM queue GROUP BY 1, 2;"
	same_rows "SELECT * FROM results" "SELECT * FROM expected" "batch query"
	sql -c 'TRUNCATE results' -c 'CHECKPOINT'
	measure batch1 "SET max_parallel_workers_per_gather = 0;
INSERT INTO results
SELECT key, date_bin('1 minute', ts, '1970-01-01'), count(*), sum(value)
FROM queue GROUP BY 1, 2;"
	same_rows "SELECT * FROM results" "SELECT * FROM expected" "batch query in one process"
}

# The hopping pipeline in mode $2 (upsert or append) as contender $1: every
# row is in exactly 60 windows, each fired once and final.
time_hop_mode() {
	local ok
	load_queue "$HOP_FILE"
	new_pipeline "windowing.hopping('1 minute', '1 second')" "emit => '$2'"
	measure "$1" "SELECT windowing.process('p');
SELECT windowing.flush('p');"
	read -r ok HOPPING_WINDOWS <<<"$(sql -F ' ' -c "SELECT sum(n) = 60 * $HOP_ROWS
		AND sum(total) = 60 * (SELECT sum(value) FROM queue)
		AND bool_and(fire_count = 1 AND is_final)
		AND NOT EXISTS (SELECT FROM p_late), count(*) FROM p_results")"
	[ "$ok" = t ] || fail "hopping pipeline ($2): rows missing from windows, fired twice, or late rows"
}

# Where no window fires twice, both modes write the same rows; upsert's
# result table has the unique index that finds a window's row again.
time_hopping() {
	local upserted
	time_hop_mode hopping upsert
	upserted=$HOPPING_WINDOWS
	time_hop_write
	time_hop_mode hopping_append append
	[ "$HOPPING_WINDOWS" = "$upserted" ] ||
		fail "hopping pipeline: $HOPPING_WINDOWS rows appended, $upserted upserted"
}

# COPY of the hopping pipeline's results into a copy of its result table
# (as contender $1), and into the same without its unique index ($2): the
# two differ by the upkeep of the index alone.
time_hop_write() {
	sql -c "COPY p_results TO '$DIR/hop_results.copy' (FORMAT binary)" >/dev/null
	copy_hop_results hop_write 'INCLUDING ALL'
	copy_hop_results hop_heap_write ''
}

copy_hop_results() {
	sql -c 'DROP TABLE IF EXISTS hop_out' \
		-c "CREATE TABLE hop_out (LIKE p_results $2)" -c 'CHECKPOINT' >/dev/null
	measure "$1" "COPY hop_out FROM '$DIR/hop_results.copy' (FORMAT binary);"
	sql -c 'DROP TABLE hop_out' >/dev/null
}

# Sessions of a 10 s gap: as many as the gaps over 10 s say, holding every
# row once.
time_session() {
	local ok
	load_queue "$ROWS_FILE"
	new_pipeline "windowing.session('10 seconds')"
	measure session "SELECT windowing.process('p');
SELECT windowing.flush('p');"
	read -r ok SESSION_WINDOWS <<<"$(sql -F ' ' -c "SELECT sum(n) = $ROWS
		AND sum(total) = (SELECT sum(value) FROM queue)
		AND count(*) = (SELECT count(*) FILTER (WHERE prev IS NULL OR ts - prev > interval '10 seconds')
			FROM (SELECT ts, lag(ts) OVER (PARTITION BY key ORDER BY ts) AS prev FROM queue) g)
		AND NOT EXISTS (SELECT FROM p_late), count(*) FROM p_results")"
	[ "$ok" = t ] || fail "session pipeline: sessions differ from the gaps, or late rows"
}

# The tumbling pipeline in STEPS steps, one transaction each, as contender
# $1; OUTPUT gets the bytes of state in memory and on the heap
# before the final flush.
time_steps() {
	load_queue "$ROWS_FILE"
	new_pipeline "windowing.tumbling('1 minute')"
	measure "$1" "DO \$\$
BEGIN
	WHILE windowing.process('p', $(((ROWS + STEPS - 1) / STEPS))) > 0 LOOP
		COMMIT;
	END LOOP;
END
\$\$;
\\timing off
SELECT state_memory_bytes, state_spilled_bytes FROM windowing.pipeline_stats WHERE name = 'p';
\\timing on
SELECT windowing.flush('p');"
}

# Sets windowing.state_memory ($1: SET ... or RESET) and waits until new
# sessions show $2.
set_state_memory() {
	local i
	sql -c "ALTER SYSTEM $1" -c 'SELECT pg_reload_conf()' >/dev/null
	for ((i = 0; i < 100; i++)); do
		[ "$(sql -c 'SHOW windowing.state_memory')" = "$2" ] && return 0
		sleep 0.1
	done
	fail "windowing.state_memory did not become $2"
}

# Saves the pipeline's results as table $1.
save_results() {
	sql -c "DROP TABLE IF EXISTS $1" -c "CREATE TABLE $1 AS
		SELECT key, window_start, window_end, window_time, n, total, fire_count, is_final
		FROM p_results"
}

time_in_memory() {
	local bytes spilled
	time_steps memory
	read -r bytes spilled <<<"$OUTPUT"
	((bytes > 0 && spilled == 0)) || fail "state was not in memory"
	check_tumbling "tumbling in steps, state in memory"
	save_results memory_results
}

time_spilled() {
	local bytes spilled
	set_state_memory "SET windowing.state_memory = '$TINY_STATE_MEMORY'" "$TINY_STATE_MEMORY"
	time_steps spilled
	set_state_memory "RESET windowing.state_memory" 64MB
	read -r bytes spilled <<<"$OUTPUT"
	((bytes == 0 && spilled > 0)) || fail "state was not spilled"
	save_results spilled_results
}

# The stepped runs, in turns first in run $1, giving the same results.
time_state_memory() {
	if (($1 % 2)); then
		time_in_memory
		time_spilled
	else
		time_spilled
		time_in_memory
	fi
	same_rows "SELECT * FROM spilled_results" "SELECT * FROM memory_results" \
		"spilled state against state in memory"
}

run_all() {
	for ((run = 1; run <= RUNS; run++)); do
		say "run $run of $RUNS"
		time_copy
		time_tumbling
		time_floor
		time_batch
		time_hopping
		time_session
		time_state_memory "$run"
	done
}

# Bytes of state per open (key, window), halfway through the queue.
measure_state_size() {
	load_queue "$ROWS_FILE"
	new_pipeline "windowing.tumbling('1 minute')"
	# in the stepping session: its memory holds the state
	read -r STATE_BYTES OPEN_WINDOWS <<<"$(sql -F ' ' <<SQL | tail -n 1
SELECT windowing.process('p', $((ROWS / 2))) AS consumed \gset
SELECT state_memory_bytes, open_windows FROM windowing.pipeline_stats WHERE name = 'p';
SQL
)"
	((OPEN_WINDOWS > 0)) || fail "no open windows halfway through the queue"
}

describe() {
	sql -F ' ' <<SQL
$SETTINGS
SELECT format('%s rows, %s keys, %s to %s, queue %s with its index',
	count(*), count(DISTINCT key), to_char(min(ts), 'YYYY-MM-DD HH24:MI:SS'),
	to_char(max(ts), 'YYYY-MM-DD HH24:MI:SS'), pg_size_pretty(pg_total_relation_size('queue')))
FROM queue;
SELECT format('settings: work_mem %s, max_parallel_workers_per_gather %s, jit %s, shared_buffers %s, windowing.max_workers %s',
	current_setting('work_mem'), current_setting('max_parallel_workers_per_gather'),
	current_setting('jit'), current_setting('shared_buffers'), current_setting('windowing.max_workers'));
SQL
	if [ "$HOP_ROWS" != "$ROWS" ]; then
		echo "the hopping pipeline runs on the first $HOP_ROWS rows; its ratio compares rows per second"
	fi
	echo "stepped runs: $STEPS steps of $(((ROWS + STEPS - 1) / STEPS)) rows; spilled with windowing.state_memory = $TINY_STATE_MEMORY"
}

median() { stats "${TIMES[$1]}" | cut -d' ' -f1; }

verdict() { awk -v r="$1" -v t="$2" 'BEGIN { print (r >= t ? "met" : "MISSED") }'; }

# One line: label, contender, rows it processed, ratio text.
print_row() {
	local med min max
	read -r med min max <<<"$(stats "${TIMES[$2]}")"
	printf '%-44s %9.3f %9.3f %9.3f %9s  %s\n' "$1" "$med" "$min" "$max" \
		"$(rate "$3" "$med")" "$4"
}

# Ratio $1 against target $2, met or not, and what it compares ($3).
judged() { printf '%-20s %s' "$1 (>= $2) $(verdict "$1" "$2")" "$3"; }

# The hopping ratio a pipeline could reach at most if keeping its result
# table's index were all it did (the two COPYs' difference), given the
# tumbling pipeline's rate $1.
index_bound() {
	local index
	index=$(awk -v a="$(median hop_write)" -v b="$(median hop_heap_write)" 'BEGIN { printf "%.3f", a - b }')
	if awk -v t="$index" 'BEGIN { exit !(t <= 0) }'; then
		echo "the index cost nothing measurable"
		return
	fi
	echo "index upkeep $index s: hopping / tumbling <= $(ratio "$(ratio "$HOP_ROWS" "$index")" "$1")"
}

print_table() {
	local copy tumbling floor batch hop_rate tumbling_rate memory spilled per_window hop_label
	copy=$(median copy)
	tumbling=$(median tumbling)
	floor=$(median floor)
	batch=$(median batch)
	memory=$(median memory)
	spilled=$(median spilled)
	hop_rate=$(ratio "$HOP_ROWS" "$(median hopping)")
	tumbling_rate=$(ratio "$ROWS" "$tumbling")
	hop_label="hopping pipeline 1 min / 1 s"
	[ "$HOP_ROWS" = "$ROWS" ] || hop_label="$hop_label ($HOP_ROWS rows)"
	per_window=$(ratio "$STATE_BYTES" "$OPEN_WINDOWS")

	printf '\n%-44s %9s %9s %9s %9s  %s\n' what 'median s' 'min s' 'max s' 'rows/s' 'ratio (target)'
	print_row "COPY into the queue (baseline)" copy "$ROWS" ""
	print_row "tumbling pipeline: process + flush" tumbling "$ROWS" \
		"$(judged "$(ratio "$copy" "$tumbling")" 1.0 "pipeline / COPY")"
	print_row "the same, read by the step itself" tumbling1 "$ROWS" \
		"$(judged "$(ratio "$copy" "$(median tumbling1)")" 1.0 "pipeline / COPY")"
	print_row "read floor: count(*), sum(value)" floor "$ROWS" \
		"$(judged "$(ratio "$floor" "$tumbling")" 0.3 "pipeline / floor")"
	print_row "read floor, one process" floor1 "$ROWS" \
		"$(judged "$(ratio "$(median floor1)" "$(median tumbling1)")" 0.3 "one-process pipeline / floor")"
	print_row "batch INSERT ... GROUP BY date_bin" batch "$ROWS" \
		"$(judged "$(ratio "$batch" "$tumbling")" 1.0 "pipeline / batch")"
	print_row "batch, one process" batch1 "$ROWS" \
		"$(judged "$(ratio "$(median batch1)" "$(median tumbling1)")" 1.0 "one-process pipeline / batch")"
	print_row "$hop_label" hopping "$HOP_ROWS" \
		"$(ratio "$hop_rate" "$tumbling_rate") hopping / tumbling, in rows/s: its output bounds it (below)"
	print_row "COPY of the hopping pipeline's results" hop_write "$HOPPING_WINDOWS" \
		"$(judged "$(ratio "$(median hop_write)" "$(median hopping)")" 0.8 "this COPY of its output / hopping")"
	print_row "the same COPY without the unique index" hop_heap_write "$HOPPING_WINDOWS" \
		"$(index_bound "$tumbling_rate")"
	print_row "hopping pipeline, emit => 'append'" hopping_append "$HOP_ROWS" \
		"$(ratio "$(median hop_heap_write)" "$(median hopping_append)") COPY without the index / append"
	print_row "session pipeline, 10 s gap" session "$ROWS" \
		"$(judged "$(ratio "$tumbling" "$(median session)")" 0.5 "session / tumbling")"
	print_row "tumbling, $STEPS steps, state in memory" memory "$ROWS" ""
	print_row "tumbling, $STEPS steps, state spilled" spilled "$ROWS" \
		"$(judged "$(ratio "$memory" "$spilled")" 0.3 "spilled / in memory")"
	printf '\n%-44s %s\n' "state per open window, halfway" \
		"$per_window bytes: $STATE_BYTES bytes in memory, $OPEN_WINDOWS open windows"
	printf '%-44s %s\n' "peak size of the queue table" \
		"$(awk -v b="$PEAK_QUEUE" -v r="$ROWS" 'BEGIN { printf "%.1f MB, %.0f bytes per row", b / 1048576, b / r }')"
	printf '%-44s %s\n' "result rows of one run" \
		"tumbling $TUMBLING_WINDOWS, hopping $HOPPING_WINDOWS, session $SESSION_WINDOWS"
}

main() {
	need_packages
	build_and_install
	setup_cluster
	prepare
	describe
	echo "$RUNS runs; every pipeline's results checked"
	run_all
	measure_state_size
	print_table
}

main "$@"
