#!/usr/bin/env bash
# Benchmark of what a step costs against the open state it holds: one open
# window per key (tumbling 1 day, or with KIND=session sessions with a gap
# of 10 minutes; count + sum, nothing fires), then steps of 1000 rows over
# random keys until the load's state log has been folded into
# window_state, then steps of 1000 rows each over random keys: STEPS
# (101 by default), then on to the next step that folds the log into
# window_state, so that the steps measured are whole cycles of steps that
# log their changes and one that folds them, and the average counts what
# writing the state costs.  A step should cost what it reads and touches; this
# measures how its cost grows with every open window of the pipeline
# instead.
#
# For each number of open windows in SIZES, it prints the CPU time of the
# stepping backend per 1000-row step, in ms (from /proc/<pid>/schedstat,
# summed over the steps and divided by their number: the kernel counts it
# in ticks of a few ms, too coarse for one small step): the median of RUNS
# runs (3 by default), each on a pipeline loaded anew in windowing's
# tables created anew, the runs going round the sizes, with the least and
# the most in brackets, and the median and the longest of the median
# run's steps' elapsed times (in memory, the longest is the fold); with
# windowing.state_memory large enough to hold everything
# (MEMORY, 1GB by default), and with state spilled to the heap
# (windowing.state_memory = SPILLED, 1MB by default); and the ratio of
# each CPU time to that of the smallest size.  The steps run in the
# session that made the state, as
# the worker would; "first ms" is the elapsed time of a 1000-row step in a
# new session, which holds none of the state (as after a restart) and
# reads from the heap what it needs, with an empty state log and with
# the longest one a restart can meet (its steps and size shown beside);
# "restart" is how many steps that new
# session takes, and their average elapsed ms, until every window is in
# its memory again (at most RAMP_STEPS, 1000 by default), read by key as
# its rows name them and ahead of them.  The worker is off
# (windowing.max_workers = 0); a 1000-row tick is read by the step itself.
#
#   test/bench/state.sh                              # 1,000 and 100,000
#   SIZES="1000 100000 1000000" test/bench/state.sh
#   KIND=session SIZES="1000 1000000" test/bench/state.sh
#   SIZES="1000 10000000" MEMORY=2GB SPILLED=150MB RUNS=1 test/bench/state.sh   # 10% of 10M windows
#   SETTINGS="min_dynamic_shared_memory = 1GB" test/bench/state.sh
#   TRIGGER='early every 100 rows' test/bench/state.sh
#
# TRIGGER is the pipeline's trigger (create_pipeline's "trigger"), one
# that fires early: its firings are written, and the windows stay open.
# SETTINGS are more lines for the cluster's postgresql.conf.  The script
# says whether the server's shared memory is in huge pages (huge_pages is
# "try" by default: the kernel must have them, vm.nr_hugepages).
set -euo pipefail

# shellcheck source=test/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

SIZES=${SIZES:-"1000 100000"}
STEPS=${STEPS:-101}
RUNS=${RUNS:-3}
KIND=${KIND:-tumbling}
MEMORY=${MEMORY:-1GB}
SPILLED=${SPILLED:-1MB}
CHECK_UP_TO=${CHECK_UP_TO:-1000000}
RAMP_STEPS=${RAMP_STEPS:-1000}
SETTINGS=${SETTINGS:-}
TRIGGER=${TRIGGER:-}
case "$KIND" in
tumbling) ASSIGNER="windowing.tumbling('1 day')" ;;
session) ASSIGNER="windowing.session('10 minutes')" ;;
*) echo "KIND is tumbling or session" >&2; exit 1 ;;
esac

setup_cluster() {
	start_temp_cluster
	restart_with "windowing.max_workers = 0
shared_buffers = 512MB
timezone = 'UTC'
$SETTINGS"
	sql -c "CREATE EXTENSION windowing"
	if grep -q 'KernelPageSize: *[0-9]\{4,\} kB' \
		"/proc/$(head -n 1 "$DIR/data/postmaster.pid")/smaps" 2>/dev/null; then
		echo "shared memory in huge pages"
	else
		echo "shared memory not in huge pages"
	fi
}

# windowing.state_memory for the next runs, through a reload.
state_memory() {
	sql -c "ALTER SYSTEM SET windowing.state_memory = '$1'" -c "SELECT pg_reload_conf()" >/dev/null
	sleep 1
}

# SQL for a pipeline with $1 open windows, one per key, their state stored.
load_sql() {
	cat <<SQL
DROP TABLE IF EXISTS q, p_results, p_late CASCADE;
-- windowing's tables anew: the dead rows of the last run's pipeline, which
-- vacuum would be busy with, weigh on neither this run nor the next
DROP EXTENSION windowing CASCADE;
CREATE EXTENSION windowing;
CREATE TABLE q (k int, ts timestamptz, v int);
SELECT windowing.create_pipeline('p', 'q', 'ts', '{k}', $ASSIGNER,
                                 'count(*) AS n, sum(v) AS s', start => false,
                                 retention => 'consume', "trigger" => NULLIF('$TRIGGER', ''));
INSERT INTO q SELECT i, timestamptz '2026-01-01 11:59' + (i % 60000) * interval '1 ms', 1
FROM generate_series(1, $1) i;
DO \$\$ BEGIN
    LOOP
        EXIT WHEN windowing.process('p') = 0;
        COMMIT;
    END LOOP;
END \$\$;
CHECKPOINT;
SQL
}

# SQL for two functions of the session: the first step of the pipeline's
# state log (NULL if empty), and whether the step just taken folded or
# rewrote the log, whose first step was "first" before it.  Both read the
# log's primary key, not every row of state_log: until vacuum comes, the
# table holds the pages of the load's log rows, deleted by its fold (66MB
# at a million windows, 590MB at ten million), which a count between the
# steps would read at every step (a worker reads nothing of the kind
# between its steps).
folded_sql() {
	cat <<'SQL'
CREATE FUNCTION pg_temp.first_logged() RETURNS bigint LANGUAGE sql SET enable_seqscan = off AS
$$ SELECT step FROM windowing.state_log
   WHERE pipeline_id = (SELECT id FROM windowing.pipeline WHERE name = 'p')
   ORDER BY step LIMIT 1 $$;
CREATE FUNCTION pg_temp.folded(first bigint) RETURNS boolean LANGUAGE sql AS
$$ SELECT coalesce(latest > first, latest IS NULL) FROM (SELECT pg_temp.first_logged() AS latest) l $$;
SQL
}

# The pipeline with $1 open windows, then, in the same session (whose
# memory holds the state, as the worker's does), $STEPS steps of 1000 rows
# over random keys of $1, each committed; prints the backend's CPU ms per
# step, the steps' median and longest elapsed ms, and the bytes of memory
# per window of the state the session holds then (pipeline_stats:
# state_memory_bytes / memory_windows).
run() {
	{ load_sql "$1"; cat <<SQL; } | sql | tail -n 1
-- Steps until the load's state log is folded into window_state, so that
-- the steps measured are a steady state: in memory, a fold of what they
-- changed every 101st step; spilled, whenever the store starts over.
$(folded_sql)
DO \$\$
DECLARE
    first bigint;
BEGIN
    PERFORM setseed(0.25);
    LOOP
        first := pg_temp.first_logged();
        INSERT INTO q SELECT 1 + floor(random() * $1)::int, timestamptz '2026-01-01 11:59:59', 1
        FROM generate_series(1, 1000);
        COMMIT;
        PERFORM windowing.process('p');
        COMMIT;
        -- a spilled pipeline folds whenever it starts its store over
        EXIT WHEN pg_temp.folded(first);
    END LOOP;
END \$\$;
CREATE TEMP TABLE cpu (s int, ms float8, elapsed float8);
CREATE FUNCTION pg_temp.cpu_ns() RETURNS bigint LANGUAGE sql AS
\$\$ SELECT split_part(pg_read_file('/proc/' || pg_backend_pid() || '/schedstat'), ' ', 1)::bigint \$\$;
DO \$\$
DECLARE
    before bigint;
    t0 timestamptz;
    s int := 0;
    first bigint;
BEGIN
    PERFORM setseed(0.5);
    -- STEPS steps, then on to the end of a cycle: to the step that folds
    LOOP
        s := s + 1;
        first := pg_temp.first_logged();
        INSERT INTO q SELECT 1 + floor(random() * $1)::int,
                             timestamptz '2026-01-01 12:00' + (s * 1000 + i) * interval '1 ms', 1
        FROM generate_series(1, 1000) i;
        COMMIT;
        before := pg_temp.cpu_ns();
        t0 := clock_timestamp();
        PERFORM windowing.process('p');
        COMMIT;
        INSERT INTO cpu VALUES (s, (pg_temp.cpu_ns() - before) / 1e6,
                                extract(epoch FROM clock_timestamp() - t0) * 1000);
        EXIT WHEN s >= $STEPS AND pg_temp.folded(first);
    END LOOP;
END \$\$;
SELECT round(avg(ms)::numeric, 2) || ' ' ||
       round(percentile_cont(0.5) WITHIN GROUP (ORDER BY elapsed)::numeric, 2) || ' ' ||
       round(max(elapsed)::numeric) || ' ' ||
       coalesce((SELECT round(state_memory_bytes::numeric / nullif(memory_windows, 0), 1)::text
                 FROM windowing.pipeline_stats WHERE name = 'p'), '-')
FROM cpu;
SQL
}

# The runs of one size (what run printed, a line each, on stdin): prints
# the least and the most CPU ms per step, then the line of the median run.
summary() {
	sort -n -k1,1 |
		awk 'NF { line[++n] = $0 } END { split(line[1], lo); split(line[n], hi)
		                                 print lo[1], hi[1], line[int((n + 1) / 2)] }'
}

# SQL for 1000 rows over random keys of $1, a millisecond apart from 12:01
# on, the same times at every step: nothing fires, and the sessions stay
# as many.
later_rows() {
	echo "INSERT INTO q SELECT 1 + floor(random() * $1)::int,
        timestamptz '2026-01-01 12:01' + i * interval '1 ms', 1 FROM generate_series(1, 1000) i"
}

# The elapsed ms of a 1000-row step in a new session, which holds none of
# the state (as after a restart) and reads from the heap what it needs,
# with an empty state log ($2 = 0, as a step in another session leaves
# it: it folds the log first) or with the longest one a restart can meet
# ($2 = longest), which the step folds first: steps of 1000 rows until
# one folds (or rewrites) the log, then through the next such cycle,
# counting its steps, then through all but the last step of a third.  (A
# cycle that starts from a rewritten row can be a step shorter than the
# one before, so waiting for the log to hold as many steps again might
# never end.)
first() {
	local rows shown=""
	rows=$(later_rows "$1")
	sql -c "SELECT windowing.process('p')" >/dev/null
	if [ "$2" != 0 ]; then
		sql >/dev/null <<SQL
$(folded_sql)
CREATE PROCEDURE pg_temp.step(INOUT folded boolean) LANGUAGE plpgsql AS \$\$
DECLARE
    first bigint := pg_temp.first_logged();
BEGIN
    $rows;
    COMMIT;
    PERFORM windowing.process('p');
    COMMIT;
    folded := pg_temp.folded(first);
END \$\$;
DO \$\$
DECLARE
    folded boolean;
    cycle int := 0;
BEGIN
    LOOP
        CALL pg_temp.step(folded);
        EXIT WHEN folded;
    END LOOP;
    LOOP
        CALL pg_temp.step(folded);
        cycle := cycle + 1;
        EXIT WHEN folded;
    END LOOP;
    FOR i IN 1 .. cycle - 1 LOOP
        CALL pg_temp.step(folded);
    END LOOP;
END \$\$;
SQL
		# in a session of its own: it reads every page of state_log
		shown=$(sql -c "SELECT ', ' || count(DISTINCT step) || ' steps, ' ||
		                round(coalesce(sum(octet_length(changes)), 0) / 1048576.0, 1) || ' MB'
		                FROM windowing.state_log")
	fi
	sql <<SQL | tail -n 1
$rows;
SELECT extract(epoch FROM clock_timestamp()) * 1000 AS t0 \gset
SELECT windowing.process('p') >= 0 AS consumed \gset
SELECT round(extract(epoch FROM clock_timestamp()) * 1000 - :t0) || '$shown';
SQL
}

# In a new session, as after a restart, steps of 1000 rows over random
# keys of $1 (later_rows) until the session's memory holds every window
# (or RAMP_STEPS steps): prints how many steps, and their average elapsed
# ms.
ramp() {
	sql <<SQL | tail -n 1
CREATE TEMP TABLE ramp (s int, elapsed float8);
DO \$\$
DECLARE
    t0 timestamptz;
    s int := 0;
    open bigint;
    memory bigint;
BEGIN
    LOOP
        s := s + 1;
        $(later_rows "$1");
        COMMIT;
        t0 := clock_timestamp();
        PERFORM windowing.process('p');
        COMMIT;
        INSERT INTO ramp VALUES (s, extract(epoch FROM clock_timestamp() - t0) * 1000);
        SELECT open_windows, memory_windows INTO open, memory
        FROM windowing.pipeline_stats WHERE name = 'p';
        EXIT WHEN memory >= open OR s >= $RAMP_STEPS;
    END LOOP;
END \$\$;
SELECT count(*) || ' steps, ' || round(avg(elapsed)::numeric, 2) || ' ms' FROM ramp;
SQL
}

# Every row in its window: prints "ok" or what was counted; "unchecked"
# past CHECK_UP_TO windows, since open_windows() takes about 2 s for each
# million windows.
check() {
	if [ "$1" -gt "$CHECK_UP_TO" ]; then
		echo unchecked
		return
	fi
	sql -c "SELECT CASE WHEN (SELECT sum(n) FROM windowing.open_windows('p'),
	                          LATERAL (SELECT (results->>'n')::bigint AS n) r) =
	                         (SELECT rows_consumed FROM windowing.pipeline_stats WHERE name = 'p')
	                    THEN 'ok' ELSE 'miscounted' END"
}

# RUNS rounds of every size in SIZES at windowing.state_memory = $1, each
# run's line added to the array named $2 under its size; the last round of
# each size then runs "$3 size".  The runs go round the sizes rather than
# one size's runs after another's: this machine's speed moves by up to a
# factor of three from one minute to the next, and a slow spell then
# weighs on every size alike instead of on one side of a ratio.
rounds() {
	local -n lines=$2
	local r n
	state_memory "$1"
	for ((r = 1; r <= RUNS; r++)); do
		for n in "${sizes[@]}"; do
			lines["$n"]+="$(run "$n")"$'\n'
			if [ "$r" = "$RUNS" ]; then
				"$3" "$n"
			fi
		done
	done
}

# After the last in-memory run of size $1: a new session's first steps,
# its ramp, and the windows checked (main's firsts, ramps and oks).
after_in_memory() {
	firsts[$1]="$(first "$1" 0) ($(first "$1" longest))"
	ramps[$1]=$(ramp "$1")
	oks[$1]=$(check "$1")
}

# After the last spilled run of size $1: the log folded by a step in
# another session, and the windows checked.
after_spilled() {
	first "$1" 0 >/dev/null
	oks[$1]+=" $(check "$1")"
}

main() {
	need_packages
	build_and_install
	setup_cluster
	local -a sizes
	read -r -a sizes <<<"$SIZES"
	printf '%-14s %-40s %8s %10s %-40s %8s %22s %22s  %s\n' 'open windows' \
		'in memory: CPU ms/step [min-max] (median, longest ms)' ratio 'B/window' \
		'spilled: CPU ms/step [min-max] (median, longest ms)' ratio 'first ms (log)' restart check
	local -A mem spill firsts ramps oks
	rounds "$MEMORY" mem after_in_memory
	rounds "$SPILLED" spill after_spilled
	local ref_mem="" ref_spill="" lo hi cpu elapsed worst bytes mem_line mcpu mbytes
	for n in "${sizes[@]}"; do
		read -r lo hi cpu elapsed worst bytes <<<"$(summary <<<"${mem[$n]}")"
		mem_line="$cpu [$lo-$hi] ($elapsed, $worst)" mcpu=$cpu mbytes=$bytes
		ref_mem=${ref_mem:-$cpu}
		read -r lo hi cpu elapsed worst bytes <<<"$(summary <<<"${spill[$n]}")"
		ref_spill=${ref_spill:-$cpu}
		printf '%-14s %-40s %7sx %10s %-40s %7sx %22s %22s  %s\n' "$n" "$mem_line" \
			"$(awk -v a="$ref_mem" -v b="$mcpu" 'BEGIN { printf "%.1f", b / a }')" "$mbytes" \
			"$cpu [$lo-$hi] ($elapsed, $worst)" "$(awk -v a="$ref_spill" -v b="$cpu" 'BEGIN { printf "%.1f", b / a }')" \
			"${firsts[$n]}" "${ramps[$n]}" "${oks[$n]}"
	done
}

main "$@"
