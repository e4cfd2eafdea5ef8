#!/usr/bin/env bash
# Benchmark of join pipelines: an interval join and a window join of orders
# and payments by windowing.process(), against the COPY that fills its two
# queues and against the batch SQL join of the same rows.
#
# The rows: SIZE orders over one hour of event time (timestamptz), evenly
# spaced, order i of user 1 + (i - 1) % 1000, and one payment for each
# order, a random delay after it.  Three cases, each with its own rows:
#
#   1,000,000 keys   (SIZE keys) the key is the order id, which each
#                    payment carries; payments 0-15 min after their order,
#                    joined with between(0, 15 min): SIZE pairs
#   1,000 keys       the key is the user id.  With 1,000 orders per user
#                    per hour and a 15 minute bound each payment would meet
#                    ~250 orders, so here both the payment delay and the
#                    bound are 0-3 s (a user's orders are 3600 / SIZE * 1000
#                    s apart, 3.6 s for a million): again one pair per
#                    payment, SIZE pairs.  The batch join cannot use the
#                    time bound to find a payment's orders: it hashes on the
#                    user id and filters the ~1,000 orders of the user,
#                    SIZE * 1,000 comparisons in all, which a pipeline
#                    avoids: it keeps a key's rows in order of time
#   window           (SIZE keys) the order id again, payments 0-15 min
#                    after their order, and a window join of tumbling 15
#                    minute windows: an order meets its payment when both
#                    fall in the same quarter hour, about half of them
#
# For each case, in one run:
#
#   COPY into the queues      the producers, and the baseline: COPY of all
#                             orders into one queue (windowing.create_queue)
#                             and of all payments into the other
#   join pipeline             the rows arrive as they would live: the
#                             stream of both inputs, in order of event
#                             time, in STEPS chunks (SIZE / STEPS rows per
#                             side on average, each chunk a stretch of event
#                             time with the orders and payments in it), each
#                             committed by COPY, then one process() call
#                             that consumes both queues' new rows; then
#                             flush().  Only process() and flush() are
#                             timed; the chunks' COPYs are shown apart
#   batch join                INSERT INTO a table SELECT ... FROM orders
#                             JOIN payments ON equal keys AND p.ts BETWEEN
#                             o.ts AND o.ts + the bound (the window case:
#                             ON equal keys AND equal tumble_start of both
#                             times), over the same rows in plain tables,
#                             analyzed
#
# rows/s counts the rows of both inputs (2 * SIZE).  The ratios are speeds
# (time of the other / time of the pipeline): pipeline / batch >= 1 means
# the pipeline joins at least as fast as the batch query, pipeline / COPY
# >= 1 that it keeps up with its producers.  Every contender's pairs are
# counted and the pipeline's are checked against the batch join's, row for
# row, and (interval joins) against SIZE; the script fails on any
# difference or late row.
# Background workers are off (windowing.max_workers = 0), so that only the
# timed process() calls run the steps.  windowing.state_memory is
# STATE_MEMORY (256MB by default): at a million keys the interval join
# keeps about 250,000 orders (15 minutes of them), and at the end of the
# input, where the orders stop and the payments of the last quarter hour
# wait for a watermark that no longer moves, about 375,000 rows (some
# 75MB), more than the default 64MB; a join whose rows do not fit reads
# them back from its log at every step.
#
# Run it from anywhere, as root or as a user with sudo (the default run
# takes about 5 minutes on 2 cores):
#
#   test/bench/join.sh                       # 1 million orders and payments
#   SIZE=100000 test/bench/join.sh
#   SIZE=100000 STEPS=100 CASES=users test/bench/join.sh
#
# CASES is "orders users window" by default (the interval joins over
# 1,000,000 and 1,000 keys, and the window join).
# With EXPLAIN=1 the server logs the plan (EXPLAIN ANALYZE) of each step
# statement that takes over 1 s, and the script prints them.

set -euo pipefail

# shellcheck source=test/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

SIZE=${SIZE:-1000000}
STEPS=${STEPS:-10}
CASES=${CASES:-"orders users window"}
EXPLAIN=${EXPLAIN:-0}
STATE_MEMORY=${STATE_MEMORY:-256MB}
USERS=1000
START="timestamptz '2026-01-01 00:00:00+00'"
SETTINGS="SET work_mem = '256MB';
SET TimeZone = 'UTC';"
COLUMNS='orders.order_id, payments.order_id AS paid_order_id, orders.user_id, orders.ts AS ordered_at, payments.ts AS paid_at, payments.amount'

declare -A TIMES PAIRS STEP_TIMES

fail() {
	say "FAIL: $*"
	exit 1
}

setup_cluster() {
	start_temp_cluster
	restart_with "windowing.max_workers = 0
windowing.state_memory = '$STATE_MEMORY'
timezone = 'UTC'"
	sql -c 'CREATE EXTENSION windowing' >/dev/null
}

# 1000000 as 1,000,000.
commas() { sed ':a; s/\B[0-9]\{3\}\>/,&/; ta' <<<"$1"; }

# The case's key column, payment delay, join bound or window, and the
# result columns.
case_params() {
	WINDOW=
	RESULT_COLUMNS=$COLUMNS
	case "$1" in
	orders) KEY=order_id BOUND='15 minutes' LABEL="$(commas "$SIZE") keys (the order id), payments 0-15 min after their order" ;;
	users) KEY=user_id BOUND='3 seconds' LABEL="$(commas "$USERS") keys (the user id), payments 0-3 s after their order" ;;
	window)
		KEY=order_id BOUND='15 minutes' WINDOW='15 minutes'
		LABEL="window join, $(commas "$SIZE") keys (the order id), payments 0-15 min after their order"
		RESULT_COLUMNS="windowing.tumble_start(orders.ts, '$WINDOW') AS window_start,
	windowing.tumble_start(orders.ts, '$WINDOW') + interval '$WINDOW' AS window_end, $COLUMNS"
		;;
	*) fail "CASES holds orders, users and window, not $1" ;;
	esac
}

# The join pipeline j of the case, paused.
create_join() {
	if [ -n "$WINDOW" ]; then
		echo "SELECT windowing.create_window_join_pipeline('j', 'orders', 'ts', '{$KEY}', 'payments', 'ts', '{$KEY}',
	'$COLUMNS', windowing.tumbling('$WINDOW'), start => false);"
	else
		echo "SELECT windowing.create_join_pipeline('j', 'orders', 'ts', '{$KEY}', 'payments', 'ts', '{$KEY}',
	'$COLUMNS', '0', '$BOUND', start => false);"
	fi
}

# The batch join's condition.
batch_condition() {
	if [ -n "$WINDOW" ]; then
		echo "orders.$KEY = payments.$KEY
	AND windowing.tumble_start(orders.ts, '$WINDOW') = windowing.tumble_start(payments.ts, '$WINDOW')"
	else
		echo "orders.$KEY = payments.$KEY AND payments.ts BETWEEN orders.ts AND orders.ts + interval '$BOUND'"
	fi
}

# The rows of the case in plain tables, in files sorted by event time: all
# of each side, and each side's part of every chunk.
generate() {
	local c
	sql >/dev/null <<SQL
$SETTINGS
DROP TABLE IF EXISTS orders_src, payments_src;
SELECT setseed(0.5);
CREATE TABLE orders_src AS
SELECT i::bigint AS order_id, 1 + ((i - 1) % $USERS)::int AS user_id,
	$START + (i - 1) * (3600.0 / $SIZE) * interval '1 second' AS ts
FROM generate_series(1, $SIZE) i;
CREATE TABLE payments_src AS
SELECT order_id, user_id, ts + random() * interval '$BOUND' AS ts, 1 + floor(random() * 1000)::int AS amount
FROM orders_src ORDER BY order_id;
-- the chunk of each row: both inputs merged in order of event time, cut
-- into STEPS equal parts
CREATE TABLE chunks AS
SELECT side, id, (row_number() OVER (ORDER BY ts, side, id) - 1) * $STEPS / (2 * $SIZE) AS chunk
FROM (SELECT 'o' AS side, order_id AS id, ts FROM orders_src
	UNION ALL SELECT 'p', order_id, ts FROM payments_src) r;
ALTER TABLE orders_src ADD COLUMN chunk int;
ALTER TABLE payments_src ADD COLUMN chunk int;
UPDATE orders_src o SET chunk = c.chunk FROM chunks c WHERE c.side = 'o' AND c.id = o.order_id;
UPDATE payments_src p SET chunk = c.chunk FROM chunks c WHERE c.side = 'p' AND c.id = p.order_id;
DROP TABLE chunks;
VACUUM ANALYZE orders_src, payments_src;
COPY (SELECT order_id, user_id, ts FROM orders_src ORDER BY ts, order_id) TO '$DIR/orders.copy';
COPY (SELECT order_id, user_id, ts, amount FROM payments_src ORDER BY ts, order_id) TO '$DIR/payments.copy';
SQL
	for ((c = 0; c < STEPS; c++)); do
		sql -c "COPY (SELECT order_id, user_id, ts FROM orders_src WHERE chunk = $c ORDER BY ts, order_id)
				TO '$DIR/orders.$c.copy'" \
			-c "COPY (SELECT order_id, user_id, ts, amount FROM payments_src WHERE chunk = $c ORDER BY ts, order_id)
				TO '$DIR/payments.$c.copy'" >/dev/null
	done
}

# Empty queues orders and payments and the join pipeline j on them.
new_pipeline() {
	sql >/dev/null <<SQL
SELECT windowing.drop_pipeline(name, true) FROM windowing.pipelines;
DROP TABLE IF EXISTS orders, payments;
SELECT windowing.create_queue('orders', 'order_id bigint, user_id int, ts timestamptz');
SELECT windowing.create_queue('payments', 'order_id bigint, user_id int, ts timestamptz, amount int');
$(create_join)
CHECKPOINT;
SQL
}

# Runs psql script $1 in a new session and prints what it printed.  Its
# timings are taken by the server's clock around each timed statement, so
# that untimed statements can run between them in the same session.
run_sql() {
	sql -F ' ' <<SQL
$SETTINGS
$1
SQL
}

# psql lines timing statement $2 (ended by ;) under label $1.
timed() {
	printf '%s\n' "SELECT extract(epoch FROM clock_timestamp()) AS t0 \\gset" "$2" \
		"SELECT '$1', extract(epoch FROM clock_timestamp()) - :t0;"
}

# Adds up the times labelled $2 in output $1.
total() { awk -v l="$2" '$1 == l { t += $2 } END { printf "%.3f\n", t }' <<<"$1"; }

time_copy() {
	local out
	new_pipeline
	out=$(run_sql "$(timed copy "COPY orders (order_id, user_id, ts) FROM '$DIR/orders.copy';")
$(timed copy "COPY payments (order_id, user_id, ts, amount) FROM '$DIR/payments.copy';")")
	TIMES[$CASE.copy]=$(total "$out" copy)
	say "  COPY into the queues: ${TIMES[$CASE.copy]} s"
}

# The statements of one chunk: its COPYs, then a step that prints the rows
# it consumed.
chunk_sql() {
	timed chunk_copy "COPY orders (order_id, user_id, ts) FROM '$DIR/orders.$1.copy';"
	timed chunk_copy "COPY payments (order_id, user_id, ts, amount) FROM '$DIR/payments.$1.copy';"
	printf '%s\n' "SELECT extract(epoch FROM clock_timestamp()) AS t0 \\gset" \
		"SELECT windowing.process('j') AS consumed \\gset" \
		"SELECT 'step', extract(epoch FROM clock_timestamp()) - :t0, :consumed;"
}

# auto_explain in the stepping session: the plans, with row counts, of the
# statements of a step that take over 1 s.
explain_settings() {
	[ "$EXPLAIN" = 1 ] || return 0
	cat <<SQL
LOAD 'auto_explain';
SET auto_explain.log_min_duration = '1s';
SET auto_explain.log_analyze = on;
SET auto_explain.log_timing = off;
SET auto_explain.log_nested_statements = on;
SQL
}

time_pipeline() {
	local out script c consumed late
	new_pipeline
	script=$(explain_settings)
	for ((c = 0; c < STEPS; c++)); do script+=$'\n'$(chunk_sql "$c"); done
	script+=$'\n'$(timed flush "SELECT windowing.flush('j');")
	out=$(run_sql "$script")
	TIMES[$CASE.steps]=$(total "$out" step)
	TIMES[$CASE.flush]=$(total "$out" flush)
	TIMES[$CASE.pipeline]=$(awk -v a="${TIMES[$CASE.steps]}" -v b="${TIMES[$CASE.flush]}" 'BEGIN { printf "%.3f", a + b }')
	TIMES[$CASE.chunk_copy]=$(total "$out" chunk_copy)
	STEP_TIMES[$CASE]=$(awk '$1 == "step" { printf "%s%.2f", n++ ? " " : "", $2 }' <<<"$out")
	consumed=$(awk '$1 == "step" { n += $3 } END { print n + 0 }' <<<"$out")
	say "  join pipeline: ${TIMES[$CASE.steps]} s in $STEPS steps, flush ${TIMES[$CASE.flush]} s"
	[ "$consumed" = $((2 * SIZE)) ] || fail "$LABEL: the steps consumed $consumed rows, not $((2 * SIZE))"
	late=$(sql -c 'SELECT count(*) FROM j_late')
	[ "$late" = 0 ] || fail "$LABEL: $late late rows"
	[ "$(sql -c 'SELECT count(*) FROM j_left_state') $(sql -c 'SELECT count(*) FROM j_right_state')" = "0 0" ] ||
		fail "$LABEL: rows left in the state tables after flush"
	[ "$(sql -c "SELECT count(*) FROM windowing.open_windows('j')")" = 0 ] ||
		fail "$LABEL: rows kept after flush"
	PAIRS[$CASE.pipeline]=$(sql -c 'SELECT count(*) FROM j_results')
}

time_batch() {
	local out
	sql >/dev/null <<SQL
DROP TABLE IF EXISTS batch_results;
CREATE TABLE batch_results AS SELECT $RESULT_COLUMNS FROM orders_src AS orders, payments_src AS payments WITH NO DATA;
CHECKPOINT;
SQL
	out=$(run_sql "$(timed batch "INSERT INTO batch_results SELECT $RESULT_COLUMNS
FROM orders_src AS orders JOIN payments_src AS payments ON $(batch_condition);")")
	TIMES[$CASE.batch]=$(total "$out" batch)
	say "  batch join: ${TIMES[$CASE.batch]} s"
	PAIRS[$CASE.batch]=$(sql -c 'SELECT count(*) FROM batch_results')
}

# The pipeline's pairs are the batch join's, and (interval joins) one per
# payment.
check_pairs() {
	local diff
	[ "${PAIRS[$CASE.pipeline]}" = "${PAIRS[$CASE.batch]}" ] ||
		fail "$LABEL: the pipeline made ${PAIRS[$CASE.pipeline]} pairs, the batch join ${PAIRS[$CASE.batch]}"
	[ -n "$WINDOW" ] || [ "${PAIRS[$CASE.batch]}" = "$SIZE" ] ||
		fail "$LABEL: ${PAIRS[$CASE.batch]} pairs, not one per payment ($SIZE)"
	diff=$(sql -c "SELECT (SELECT count(*) FROM (TABLE j_results EXCEPT ALL TABLE batch_results) a)
		+ (SELECT count(*) FROM (TABLE batch_results EXCEPT ALL TABLE j_results) b)")
	[ "$diff" = 0 ] || fail "$LABEL: $diff pairs differ between the pipeline and the batch join"
}

# One line: label, seconds, pairs, ratios; rows/s unless $5 says "-".
row() {
	printf '%-44s %9.3f %9s %9s  %s\n' "$1" "$2" "${5:-$(rate $((2 * SIZE)) "$2")}" "$3" "$4"
}

print_case() {
	local p=${TIMES[$1.pipeline]}
	case_params "$1"
	printf '\n%s: %s orders, %s payments, %s\n' "$LABEL" "$(commas "$SIZE")" \
		"$(commas "$SIZE")" "${WINDOW:+same tumbling window of }${WINDOW:-between(0, $BOUND)}"
	printf '%-44s %9s %9s %9s  %s\n' what seconds 'rows/s' pairs 'ratio'
	row "COPY into the queues (baseline)" "${TIMES[$1.copy]}" - ""
	row "join pipeline: $STEPS x process() + flush()" "$p" "${PAIRS[$1.pipeline]}" \
		"$(ratio "${TIMES[$1.batch]}" "$p") pipeline / batch, $(ratio "${TIMES[$1.copy]}" "$p") pipeline / COPY"
	row "  of which flush()" "${TIMES[$1.flush]}" - "" -
	row "  its chunks' COPYs (untimed above)" "${TIMES[$1.chunk_copy]}" - ""
	row "batch INSERT ... JOIN" "${TIMES[$1.batch]}" "${PAIRS[$1.batch]}" ""
	printf '%-44s %s\n' "seconds of each step" "${STEP_TIMES[$1]}"
}

# The plans auto_explain logged, without the statements' text.
print_explains() {
	[ "$EXPLAIN" = 1 ] || return 0
	printf '\nplans of the step statements over 1 s (EXPLAIN ANALYZE, from the server log):\n'
	as_server_user cat "$DIR/server.log" | awk '
		/^[0-9-]+ [0-9:.]+ UTC / { plan = / LOG:  duration: .* plan:/ }
		plan && !/^\tQuery Text:/ { print }'
}

main() {
	need_packages
	build_and_install
	setup_cluster
	for CASE in $CASES; do
		case_params "$CASE"
		say "$LABEL: generating $SIZE orders and payments"
		generate
		time_copy
		time_batch
		time_pipeline
		check_pairs
	done
	sql -F ' ' <<SQL
$SETTINGS
SELECT format('settings: work_mem %s, jit %s, shared_buffers %s, windowing.max_workers %s, windowing.state_memory %s, autovacuum %s',
	current_setting('work_mem'), current_setting('jit'), current_setting('shared_buffers'),
	current_setting('windowing.max_workers'), current_setting('windowing.state_memory'),
	current_setting('autovacuum'));
SQL
	echo "pipeline: $STEPS steps of $((SIZE / STEPS)) rows per side on average, each after its chunk's COPY; rows/s counts both inputs"
	if [[ " $CASES " == *" users "* ]]; then
		echo "the $(commas "$USERS") key case narrows the payment delay and the bound to 0-3 s: a 15 min bound would give ~250 orders per payment"
	fi
	for CASE in $CASES; do print_case "$CASE"; done
	print_explains
}

main "$@"
