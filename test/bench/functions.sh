#!/usr/bin/env bash
# Benchmark of the windowing SQL functions against the plain PostgreSQL
# queries a user would write without them:
#
#   tumble_start   vs  date_bin(size, ts, '1970-01-01')
#   hop_start      vs  LATERAL generate_series(...) of the window starts
#   hop (in FROM)  vs  the same
#   session()      vs  lag() + running sum() + min()/max() over the session
#                      (with ORDER BY ts, and without: session() needs none)
#   sessions()     vs  the same lag()/sum() idiom grouped by session
#
# It builds and installs the extension, starts a throwaway cluster, loads one
# table of ROWS events (1000 keys, a new event per key every 5 minutes on
# average, so a 10 minute session gap gives a mix of long sessions and short
# ones), then times each query RUNS times, alternating the two sides of a
# pair.  Both sides of a pair reduce their output to the same checksum, and
# the script fails if the checksums differ.  It prints the median, min and
# max time of each query, rows of the table per second, and the ratio
# baseline / function (above 1 means the function is faster).
#
# Run it from anywhere, as root or as a user with sudo:
#
#   test/bench/functions.sh                   # 10 million rows, 3 runs
#   ROWS=1000000 test/bench/functions.sh
#   ROWS=200000 RUNS=1 WORKERS=0 test/bench/functions.sh
#
# WORKERS sets max_parallel_workers_per_gather and JIT sets jit; both default
# to PostgreSQL's defaults (2 and on).

set -euo pipefail

# shellcheck source=test/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

ROWS=${ROWS:-10000000}
RUNS=${RUNS:-3}
WORKERS=${WORKERS:-2}
JIT=${JIT:-on}
KEYS=1000
GAP_TEXT='10 minutes'
GAP="interval '$GAP_TEXT'"
EPOCH="timestamptz '1970-01-01 00:00:00+00'"
SETTINGS="SET work_mem = '256MB';
SET max_parallel_workers_per_gather = $WORKERS;
SET jit = $JIT;
SET TimeZone = 'UTC';"

# Pair names, their SQL, and the ratio each pair should reach.
NAMES=()
BASELINE=()
FUNCTION=()
TARGET=()
declare -A TIMES RESULT

add_pair() {
	NAMES+=("$1")
	BASELINE+=("$2")
	FUNCTION+=("$3")
	TARGET+=("$4")
}

# The checksum of a timestamptz column: order-independent and exact.
hash() { echo "sum(interval_hash($1 - $EPOCH))"; }

define_tumble() {
	local size="interval '1 minute'" q
	q="SELECT count(*), sum(n), sum(v), $(hash w) FROM (
	SELECT %s AS w, count(*) AS n, sum(value) AS v FROM t GROUP BY 1) g"
	# shellcheck disable=SC2059
	add_pair "tumble 1 minute" \
		"$(printf "$q" "date_bin($size, ts, $EPOCH)")" \
		"$(printf "$q" "windowing.tumble_start(ts, $size)")" 1.0
}

# hop windows [s, s + size) holding ts, for size a multiple of slide: the
# fast select-list form (hop_start) and the table-function form (hop in
# FROM), both against the generate_series idiom.  In FROM, PostgreSQL keeps
# every set in a tuplestore per row, which bounds what any function can gain.
define_hop() {
	local size="interval '$1'" slide="interval '$2'" idiom
	idiom="SELECT count(*), sum(n), $(hash w) FROM (
	SELECT s AS w, count(*) AS n
	FROM t, LATERAL generate_series(date_bin($slide, ts, $EPOCH) - $size + $slide, ts, $slide) s
	GROUP BY 1) g"
	add_pair "hop_start $1 / $2" "$idiom" \
		"SELECT count(*), sum(n), $(hash w) FROM (
	SELECT w, count(*) AS n
	FROM (SELECT windowing.hop_start(ts, $size, $slide) AS w FROM t) h
	GROUP BY 1) g" 2.0
	add_pair "hop in FROM $1 / $2" "$idiom" \
		"SELECT count(*), sum(n), $(hash w) FROM (
	SELECT w.window_start AS w, count(*) AS n
	FROM t, windowing.hop(ts, $size, $slide) w
	GROUP BY 1) g" 1.0
}

# Rows with their session number: a row more than the gap after the
# previous one of its key starts a new session.
SESSION_IDS="SELECT key, ts, sum(brk) OVER (PARTITION BY key ORDER BY ts) AS sid
	FROM (SELECT key, ts,
		CASE WHEN ts > lag(ts) OVER (PARTITION BY key ORDER BY ts) + $GAP THEN 1 ELSE 0 END AS brk
		FROM t) a"

define_session() {
	add_pair "session per row" \
		"SELECT count(*), $(hash s), $(hash e) FROM (
	SELECT min(ts) OVER w AS s, max(ts) OVER w + $GAP AS e
	FROM ($SESSION_IDS) b
	WINDOW w AS (PARTITION BY key, sid)) c" \
		"SELECT count(*), $(hash '(w).window_start'), $(hash '(w).window_end') FROM (
	SELECT windowing.session(ts, $GAP) OVER (PARTITION BY key ORDER BY ts) AS w
	FROM t) s" 1.5
	# session() merges in any order, so it needs no ORDER BY, and saves the sort
	add_pair "session per row, no ORDER BY" "${BASELINE[-1]}" \
		"SELECT count(*), $(hash '(w).window_start'), $(hash '(w).window_end') FROM (
	SELECT windowing.session(ts, $GAP) OVER (PARTITION BY key) AS w
	FROM t) s" 1.5
}

define_sessions() {
	add_pair "sessions per key" \
		"SELECT count(*), $(hash s), $(hash e) FROM (
	SELECT key, min(ts) AS s, max(ts) + $GAP AS e
	FROM ($SESSION_IDS) b
	GROUP BY key, sid) c" \
		"SELECT count(*), $(hash w.window_start), $(hash w.window_end) FROM (
	SELECT key, windowing.sessions(ts, $GAP) AS ws FROM t GROUP BY key) g,
	unnest(g.ws) w" 2.0
}

load_data() {
	say "loading $ROWS rows"
	sql <<SQL
CREATE EXTENSION windowing;
CREATE TABLE t AS
SELECT 1 + floor(random() * $KEYS)::int AS key,
	timestamptz '2024-01-01 00:00:00+00' + random() * interval '5 minutes' * ($ROWS / $KEYS) AS ts,
	floor(random() * 1000)::int AS value
FROM generate_series(1, $ROWS)
ORDER BY ts;
VACUUM ANALYZE t;
SQL
}

describe_data() {
	sql -F ' ' <<SQL
$SETTINGS
SELECT format('%s rows, %s keys, %s to %s', count(*), count(DISTINCT key),
	to_char(min(ts), 'YYYY-MM-DD HH24:MI'), to_char(max(ts), 'YYYY-MM-DD HH24:MI'))
FROM t;
SELECT format('gap %s: %s sessions, %s rows per session on average, %s%% of sessions a single row',
	'$GAP_TEXT', count(*), round(sum(n) / count(*), 1), round(100.0 * count(*) FILTER (WHERE n = 1) / count(*), 1))
FROM (SELECT count(*) AS n FROM ($SESSION_IDS) b GROUP BY key, sid) c;
SELECT format('settings: work_mem %s, max_parallel_workers_per_gather %s, jit %s, shared_buffers %s',
	current_setting('work_mem'), current_setting('max_parallel_workers_per_gather'),
	current_setting('jit'), current_setting('shared_buffers'));
SQL
}

# Runs one query in a new session; prints its time in seconds, then its result.
time_query() {
	local out ms
	out=$(sql -F ' ' <<SQL
$SETTINGS
\timing on
$1;
SQL
)
	ms=$(sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' <<<"$out")
	[ -n "$ms" ] || { say "no timing in: $out"; exit 1; }
	awk -v ms="$ms" 'BEGIN { printf "%.3f\n", ms / 1000 }'
	grep -v '^Time: ' <<<"$out"
}

# Times side ("baseline" or "function") of pair i once and checks its result.
measure() {
	local i=$1 side=$2 sql out result
	if [ "$side" = baseline ]; then sql=${BASELINE[$i]}; else sql=${FUNCTION[$i]}; fi
	out=$(time_query "$sql")
	result=$(tail -n +2 <<<"$out")
	TIMES[$i,$side]+="$(head -1 <<<"$out") "
	say "  ${NAMES[$i]}, $side: $(head -1 <<<"$out") s"
	if [ -z "${RESULT[$i]:-}" ]; then
		RESULT[$i]=$result
	elif [ "${RESULT[$i]}" != "$result" ]; then
		say "FAIL: ${NAMES[$i]}: the function and its baseline disagree"
		say "  expected: ${RESULT[$i]}"
		say "  $side gave: $result"
		exit 1
	fi
}

run_all() {
	for ((run = 1; run <= RUNS; run++)); do
		say "run $run of $RUNS"
		for i in "${!NAMES[@]}"; do
			if ((run % 2)); then
				measure "$i" baseline
				measure "$i" function
			else
				measure "$i" function
				measure "$i" baseline
			fi
		done
	done
}

print_row() {
	local pair=$1 label=$2 times=$3 extra=$4 med min max
	read -r med min max <<<"$(stats "$times")"
	printf '%-30s %-10s %9.3f %9.3f %9.3f %10s  %s\n' "$pair" "$label" \
		"$med" "$min" "$max" \
		"$(awk -v r="$ROWS" -v t="$med" 'BEGIN { printf "%.2fM", r / t / 1e6 }')" "$extra"
}

print_table() {
	local i b f ratio met
	printf '\n%-30s %-10s %9s %9s %9s %10s  %s\n' pair query \
		'median s' 'min s' 'max s' 'rows/s' 'ratio (target)'
	for i in "${!NAMES[@]}"; do
		b=$(stats "${TIMES[$i,baseline]}" | cut -d' ' -f1)
		f=$(stats "${TIMES[$i,function]}" | cut -d' ' -f1)
		ratio=$(awk -v b="$b" -v f="$f" 'BEGIN { printf "%.2f", b / f }')
		met=$(awk -v r="$ratio" -v t="${TARGET[$i]}" 'BEGIN { print (r >= t ? "met" : "MISSED") }')
		print_row "${NAMES[$i]}" baseline "${TIMES[$i,baseline]}" ""
		print_row "" windowing "${TIMES[$i,function]}" \
			"$ratio (>= ${TARGET[$i]}) $met"
	done
}

main() {
	need_packages
	build_and_install
	start_temp_cluster
	load_data
	define_tumble
	define_hop '10 minutes' '5 minutes'
	define_hop '1 hour' '10 minutes'
	define_session
	define_sessions
	describe_data
	echo "$RUNS runs; every query's results checked against its baseline"
	run_all
	print_table
}

main "$@"
