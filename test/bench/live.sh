#!/usr/bin/env bash
# Pipelines run by the background worker against live producers.
#
# 1. End-to-end latency: how long after the row that closes a window
# commits is the window's result visible?  pgbench inserts RATE rows per second into a queue, in transactions of
# BATCH rows whose event time is the clock at insert, for SECONDS_RUN
# seconds.  A tumbling pipeline of WINDOW (100 ms by default: about 600
# windows in the default 60 s; count + sum per key, KEYS keys, no
# out-of-orderness) fires a window as soon as a row past its end
# commits.  A poller reads the pipeline's watermark every millisecond; a
# watermark is visible exactly when the step that moved it committed its
# results, in the same transaction.  A window's latency is the time its
# results became visible minus its end: an upper bound of the time since
# the closing row's commit, since that row was inserted after the window's
# end.  It prints the median, p99 and maximum over the windows of the run,
# twice: with the worker woken by the queue's commits (windowing's
# default) and, as the baseline, with that wake removed, so that only
# windowing.poll_interval (100 ms by default) wakes the worker.  A window
# closes only once a row past its end commits, and the producers start
# their transactions at random (pgbench's Poisson schedule), so the wait
# for that commit is part of each latency: the script also prints the
# latencies counted from the commit that closed the window, the first
# commit of a producer transaction holding a row past its end (each
# producer transaction records the latest time of its rows and its
# transaction id, and the server its commit time,
# track_commit_timestamp), which is the worker's part: waking, stepping
# and committing the results; and the p99 of that commit's
# wait after the window's end.  Beside them: the p99 and maximum
# of the producers' own transactions (pgbench's latency of each, from its
# scheduled start), the share of a core the worker used and the share of
# the machine left idle, over the producers' run.  Every row inserted
# must be counted in a window or be in the late table.
#
# 2. Queue storage: 4 pgbench clients insert QUEUE_ROWS rows (20 million
# by default; 0 skips this part) in transactions of 1000 rows as fast as
# they can, while the worker runs a tumbling 1 minute pipeline on them and
# empties the queue whenever it passes windowing.queue_truncate_size.  It
# prints the producers' rate, the largest size the queue table reached
# (sampled every 0.2 s), how long the worker took to drain the queue after
# the producers stopped, and checks that every row was counted.
#
# PARALLELISM runs the latency pipeline as that many parts (create_pipeline's
# parallelism), each stepped by a worker of its own; a window's results are
# visible once every part has committed its share, when the least of the
# parts' watermarks passes its end.
#
# TRIGGER gives the latency pipeline a trigger (create_pipeline's
# trigger, one that does not purge: the check adds up each window's latest
# firing), so that early firings run beside the firings whose latency is
# measured.
#
# EMIT is the latency pipeline's emit mode ('upsert' by default, or
# 'append', whose result table has no unique index to keep).
#
#   test/bench/live.sh
#   RATE=20000 SECONDS_RUN=10 QUEUE_ROWS=2000000 test/bench/live.sh
#   KEYS=1000000 WINDOW='1 second' QUEUE_ROWS=0 test/bench/live.sh
#   TRIGGER='early every 100 milliseconds' QUEUE_ROWS=0 test/bench/live.sh
#   KEYS=1000000 PARALLELISM=2 QUEUE_ROWS=0 test/bench/live.sh
#   KEYS=1000000 EMIT=append QUEUE_ROWS=0 test/bench/live.sh

set -euo pipefail

# shellcheck source=test/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

RATE=${RATE:-50000}
BATCH=${BATCH:-100}
SECONDS_RUN=${SECONDS_RUN:-60}
QUEUE_ROWS=${QUEUE_ROWS:-20000000}
TRIGGER=${TRIGGER:-}
PARALLELISM=${PARALLELISM:-1}
EMIT=${EMIT:-upsert}
KEYS=${KEYS:-1000}
WINDOW=${WINDOW:-100 milliseconds}

setup_cluster() {
	start_temp_cluster
	sql >/dev/null <<SQL
CREATE EXTENSION windowing;
CREATE TABLE events (key int, ts timestamptz, value int);
SQL
	restart_with "track_commit_timestamp = on"
	sql -c "CREATE TABLE closing (latest timestamptz, xid xid)" >/dev/null
	cat >"$DIR/producer.sql" <<SQL
WITH rows AS (
	INSERT INTO events (key, ts, value)
	SELECT 1 + floor(random() * $KEYS)::int, clock_timestamp(), floor(random() * 1000)::int
	FROM generate_series(1, $BATCH)
	RETURNING ts)
INSERT INTO closing SELECT max(ts), pg_current_xact_id()::text::xid FROM rows;
SQL
	chmod a+r "$DIR/producer.sql"
}

# A fresh pipeline on an empty queue; $1 = wake or poll.
new_pipeline() {
	sql >/dev/null <<SQL
SELECT windowing.drop_pipeline(name, true) FROM windowing.pipelines;
TRUNCATE events;
CREATE TABLE IF NOT EXISTS seen (watermark bigint, at timestamptz);
TRUNCATE seen;
TRUNCATE closing;
SELECT windowing.create_pipeline('lat', 'events', 'ts', '{key}',
	windowing.tumbling('$WINDOW'), 'count(*) AS n, sum(value) AS total',
	max_out_of_orderness => '0', retention => 'consume', "trigger" => NULLIF('$TRIGGER', ''),
	parallelism => $PARALLELISM, emit => '$EMIT');
SQL
	[ "$1" = wake ] || sql -c 'DROP TRIGGER windowing_wake ON events'
	# the workers are up, one a part
	for ((i = 0; i < 100; i++)); do
		[ "$(sql -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'windowing worker'")" = "$PARALLELISM" ] && return 0
		sleep 0.1
	done
	say "the workers did not start"
	exit 1
}

# Reads the watermark every millisecond for $1 seconds, recording changes,
# each in a transaction of its own: a transaction held open for the whole
# run would hold back the xmin horizon, and with it the pipeline's scan
# point and the pruning of its tables, as any long transaction would.
poll() {
	sql <<SQL
CREATE PROCEDURE pg_temp.poll(seconds int) LANGUAGE plpgsql AS \$\$
DECLARE
	w bigint;
	last bigint;
	stop timestamptz := clock_timestamp() + seconds * interval '1 second';
BEGIN
	WHILE clock_timestamp() < stop LOOP
		SELECT min(watermark) INTO w FROM windowing.pipeline WHERE name = 'lat';
		IF w IS DISTINCT FROM last THEN
			INSERT INTO seen VALUES (w, clock_timestamp());
			last := w;
		END IF;
		COMMIT;
		PERFORM pg_sleep(0.001);
	END LOOP;
END
\$\$;
CALL pg_temp.poll($1);
SQL
}

# CPU time (ns) the workers have used, and the machine's idle and total
# ticks: "workers idle total".
cpu_sample() {
	local worker used=0
	for worker in $(sql -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'windowing worker'"); do
		used=$((used + $(cut -d' ' -f1 "/proc/$worker/schedstat")))
	done
	awk -v w="$used" '/^cpu / {
		for (i = 2; i <= NF; i++) total += $i
		print w, $5 + $6, total }' /proc/stat
}

# From samples $1 and $2: "workers' % of a core, machine's idle %".
cpu_share() {
	local w1 i1 t1 w2 i2 t2
	read -r w1 i1 t1 <<<"$1"
	read -r w2 i2 t2 <<<"$2"
	awk -v w="$((w2 - w1))" -v i="$((i2 - i1))" -v t="$((t2 - t1))" -v hz="$(getconf CLK_TCK)" \
		-v cores="$(nproc)" 'BEGIN { printf "%.0f %.0f", w / 1e9 / (t / hz / cores) * 100, i / t * 100 }'
}

# The producer transactions' latest row times and commit times, into
# table "closed", by latest time.
closed() {
	sql >/dev/null <<SQL
DROP TABLE IF EXISTS closed;
CREATE TABLE closed AS SELECT latest, pg_xact_commit_timestamp(xid) AS committed FROM closing;
CREATE INDEX ON closed (latest);
ANALYZE closed;
SQL
}

# The producers' own transactions, from pgbench's log of each (files
# $1.*): "p99 max" in ms.  A window closes only once a row past its end
# commits, so a slow producer transaction delays it as much.
producer_latency() {
	cat "$1".* | awk '{ print $3 / 1000 }' | sort -n |
		awk '{ v[NR] = $1 } END { printf "%.1f %.1f", v[int(NR * 0.99)], v[NR] }'
}

# Runs producer and poller; prints "windows median p99 max" in ms, then the
# producers' "p99 max" in ms, the workers' % of a core and the machine's
# idle %.
run() {
	local tps=$((RATE / BATCH)) pid before after
	new_pipeline "$1"
	poll $((SECONDS_RUN + 3)) &
	pid=$!
	before=$(cpu_sample)
	as_server_user "$PGBIN/pgbench" -h "$PGHOST" -U postgres -n -c 4 -j 2 -R "$tps" \
		-T "$SECONDS_RUN" -l --log-prefix="$DIR/txn.$1" -f "$DIR/producer.sql" postgres \
		>"$DIR/pgbench.$1.log" 2>&1 || { cat "$DIR/pgbench.$1.log"; exit 1; }
	after=$(cpu_sample)
	wait "$pid"
	closed
	# the ends of the windows after the first and before the last full one
	sql -F ' ' <<SQL
WITH bounds AS (
	SELECT date_bin('$WINDOW', min(window_start), timestamptz '2000-01-01 00:00:00+00')
			+ interval '$WINDOW' AS first,
		date_bin('$WINDOW', max(window_start), timestamptz '2000-01-01 00:00:00+00') AS last
	FROM lat_results),
ends AS (
	SELECT e FROM bounds, generate_series(first + interval '$WINDOW', last, interval '$WINDOW') e),
visible AS (
	SELECT e, (SELECT min(at) FROM seen
		WHERE watermark >= (extract(epoch FROM e) * 1e6)::bigint
			- (extract(epoch FROM timestamptz '2000-01-01 00:00:00+00') * 1e6)::bigint - 1) AS at,
		(SELECT min(c.committed) FROM closed c
			WHERE c.latest >= e AND c.latest < e + interval '1 second') AS closing
	FROM ends),
lat AS (
	SELECT extract(epoch FROM at - e) * 1000 AS ms, extract(epoch FROM at - closing) * 1000 AS after,
		extract(epoch FROM closing - e) * 1000 AS wait
	FROM visible)
SELECT count(*), round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1),
	round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 1),
	round(max(ms)::numeric, 1),
	round(percentile_cont(0.5) WITHIN GROUP (ORDER BY after)::numeric, 1) || '/' ||
	round(percentile_cont(0.99) WITHIN GROUP (ORDER BY after)::numeric, 1) || '/' ||
	round(max(after)::numeric, 1),
	round(percentile_cont(0.99) WITHIN GROUP (ORDER BY wait)::numeric, 1)
FROM lat;
SQL
	echo "$(producer_latency "$DIR/txn.$1") $(cpu_share "$before" "$after")"
	check "$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$DIR/pgbench.$1.log")"
}

# Every row of the $1 transactions is in a window or, when it came after
# its window fired (concurrent producers' clocks interleave, and no
# out-of-orderness is allowed), in the late table.
check() {
	local counted
	sql -c "SELECT windowing.pause_pipeline('lat')" \
		-c "SELECT windowing.flush('lat')" >/dev/null
	counted=$(sql -c "SELECT (SELECT sum(n) FROM (SELECT DISTINCT ON (key, window_start) n FROM lat_results
		ORDER BY key, window_start, fire_count DESC) latest) + (SELECT count(*) FROM lat_late)")
	[ "$counted" = $(($1 * BATCH)) ] ||
		{ say "FAIL: $(($1 * BATCH)) rows inserted, $counted counted"; exit 1; }
}

# Part 2: the queue's size while producers go flat out.
queue_bound() {
	local clients=4 per_txn=1000 txns start end peak=0 size drained
	txns=$((QUEUE_ROWS / clients / per_txn))
	sql >/dev/null <<SQL
SELECT windowing.drop_pipeline(name, true) FROM windowing.pipelines;
TRUNCATE events;
SELECT windowing.create_pipeline('bound', 'events', 'ts', '{key}',
	windowing.tumbling('1 minute'), 'count(*) AS n, sum(value) AS total',
	max_out_of_orderness => '2 seconds', late_table => '', retention => 'consume');
SQL
	sed "s/generate_series(1, $BATCH)/generate_series(1, $per_txn)/" "$DIR/producer.sql" >"$DIR/bulk.sql"
	chmod a+r "$DIR/bulk.sql"
	start=$(date +%s.%N)
	as_server_user "$PGBIN/pgbench" -h "$PGHOST" -U postgres -n -c "$clients" -j 2 \
		-t "$txns" -f "$DIR/bulk.sql" postgres >"$DIR/pgbench.bulk.log" 2>&1 &
	local pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		size=$(sql -c "SELECT pg_total_relation_size('events')")
		((size > peak)) && peak=$size
		sleep 0.2
	done
	wait "$pid" || { cat "$DIR/pgbench.bulk.log"; exit 1; }
	end=$(date +%s.%N)
	for ((i = 0; i < 6000; i++)); do
		[ "$(sql -c "SELECT rows_consumed FROM windowing.pipeline_stats WHERE name = 'bound'")" = \
			$((txns * clients * per_txn)) ] && break
		sleep 0.1
	done
	drained=$(awk -v a="$(date +%s.%N)" -v b="$end" 'BEGIN { printf "%.1f", a - b }')
	sql -c "SELECT windowing.advance_watermark('bound', now() + interval '1 hour')" >/dev/null
	[ "$(sql -c "SELECT sum(n) FROM bound_results")" = $((txns * clients * per_txn)) ] ||
		{ say "FAIL: rows missing from the results"; exit 1; }
	awk -v r=$((txns * clients * per_txn)) -v t="$(awk -v a="$end" -v b="$start" 'BEGIN { print a - b }')" \
		-v p="$peak" -v d="$drained" 'BEGIN {
		printf "%d rows in %.1f s (%.0fk rows/s); queue peak %.1f MB; drained %s s after the producers stopped\n",
			r, t, r / t / 1000, p / 1048576, d }'
}

main() {
	need_packages
	build_and_install
	setup_cluster
	echo "producer: $RATE rows/s in transactions of $BATCH rows, 4 clients, $SECONDS_RUN s; $KEYS keys; tumbling $WINDOW, count + sum; $PARALLELISM part(s)"
	printf '%-36s %8s %10s %10s %10s  %-22s  %s\n' "worker woken by" windows "median ms" "p99 ms" "max ms" \
		"after the closing commit" "the closing commit's wait p99 ms; producers' transactions p99/max ms, workers' CPU, machine idle"
	for how in wake poll; do
		{
			read -r n med p99 max after wait
			read -r txn_p99 txn_max worker idle
		} <<<"$(run "$how")"
		[[ "$n" =~ ^[0-9]+$ ]] || exit 1
		label="commits into the queue"
		[ "$how" = wake ] || label="polling only (windowing.poll_interval)"
		printf '%-36s %8s %10s %10s %10s  %-22s  %s\n' "$label" "$n" "$med" "$p99" "$max" "$after" \
			"$wait; $txn_p99/$txn_max, $worker% of a core, $idle% idle"
	done
	if ((QUEUE_ROWS > 0)); then
		echo
		echo "queue storage: $QUEUE_ROWS rows from 4 clients, 1000 rows per transaction; tumbling 1 minute, count + sum"
		queue_bound
	fi
}

main "$@"
