#!/usr/bin/env bash
# Pipelines over a distributed queue: ROWS rows of KEYS keys over one hour
# of event time in a table distributed by its key over two worker nodes
# (SHARDS shards), on a Citus cluster of a coordinator and two workers
# started here on unix sockets; then a pipeline of each of SHAPES over it
# (tumbling 1 minute count + sum, sessions with a 1-minute gap, hopping 10
# minutes by 1 minute in append mode), made paused, resumed on both nodes
# at once, timed until every shard's pipeline has read its rows and fired
# by the shards' least watermark.  The baseline is the same pipeline on one
# node (the coordinator) over a plain queue holding the same rows.  Prints,
# for each shape, RUNS times each, the seconds, the rows per second (of the
# cluster, and of each worker node) and the ratio of the cluster to one
# node (above 1: faster).
# The nodes share this machine's cores: the ratio says what running the
# shards' pipelines side by side gives here, not what separate machines
# would.  Needs Citus installed (the project's CI builds it from Citus's
# source).
#
#   test/bench/citus.sh
#   ROWS=2000000 KEYS=100000 RUNS=3 SHAPES=tumbling test/bench/citus.sh
set -euo pipefail

# shellcheck source=test/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

ROWS=${ROWS:-1000000}
KEYS=${KEYS:-100000}
RUNS=${RUNS:-3}
SHARDS=${SHARDS:-4}
SHAPES=${SHAPES:-"tumbling session hopping"}

# psql on node $1 (0: the coordinator)
on() {
	local node=$1
	shift
	PGHOST="$DIR/node$node" sql "$@"
}

start_nodes() {
	DIR=$(mktemp -d)
	[ "$(id -u)" -ne 0 ] || chown postgres: "$DIR"
	trap 'for n in 0 1 2; do stop_cluster "$DIR/node$n"; done; rm -rf "$DIR"' EXIT
	local n
	for n in 0 1 2; do
		start_cluster "$DIR/node$n"
		printf '%s\n' "shared_preload_libraries = 'citus,windowing'" "shared_buffers = 512MB" \
			"max_wal_size = 8GB" "windowing.poll_interval = 10" "timezone = 'UTC'" \
			>>"$DIR/node$n/data/postgresql.conf"
		as_server_user "$PGBIN/pg_ctl" -D "$DIR/node$n/data" -l "$DIR/node$n/server.log" -w restart >/dev/null
		on "$n" -c "CREATE EXTENSION citus" >/dev/null
	done
	on 0 -c "SELECT citus_set_coordinator_host('$DIR/node0', 5432)" >/dev/null
	for n in 1 2; do
		on 0 -c "SELECT citus_add_node('$DIR/node$n', 5432)" >/dev/null
	done
	on 0 -c "CREATE EXTENSION windowing" >/dev/null
}

# The rows, into table $1 of the coordinator.
fill() {
	on 0 >/dev/null <<SQL
INSERT INTO $1 (k, ts, v)
SELECT (g::bigint * 7919) % $KEYS, '2026-01-01 00:00+00'::timestamptz + g * (interval '1 hour' / $ROWS), g % 10
FROM generate_series(1, $ROWS) g;
-- a row of every shard past the hour, so that the least watermark passes it
INSERT INTO $1 (k, ts, v) SELECT k, '2026-01-01 02:00+00', 0 FROM generate_series(0, $KEYS - 1) k;
SQL
}

SHARD_ROWS="SELECT sum(rows_consumed) FROM windowing.pipeline WHERE shard_of = 'p'"
# the rows of a node's shards whose pipelines' watermark passed the hour
SHARD_DONE="SELECT coalesce(sum(rows_consumed) FILTER (WHERE watermark_time > '2026-01-01 01:00'), 0)
            FROM windowing.pipeline_stats WHERE name IN (SELECT name FROM windowing.pipeline WHERE shard_of = 'p')"

# Seconds from the resume of the distributed pipeline of shape $1 to every
# shard's pipeline having read its rows and fired its hour; the rows each
# worker node read go to $DIR/per_node.
distributed_run() {
	local start end total
	total=$((ROWS + KEYS))
	on 0 >/dev/null <<SQL
SELECT windowing.create_pipeline('p', 'events', 'ts', '{k}', $(bench_shape "$1"),
    max_out_of_orderness => '10 seconds', start => false);
SQL
	until [ "$(on 0 -c "SELECT count(*) FROM windowing.distributed_pipeline_stats
	                    WHERE name = 'p' AND node IS NOT NULL")" = "$SHARDS" ]; do
		sleep 0.1
	done
	on 0 -c "CHECKPOINT" >/dev/null
	start=$(date +%s.%N)
	on 1 -c "SELECT windowing.resume_pipeline(name) FROM windowing.pipeline WHERE shard_of = 'p'" >/dev/null &
	on 2 -c "SELECT windowing.resume_pipeline(name) FROM windowing.pipeline WHERE shard_of = 'p'" >/dev/null
	wait
	# each node's own catalog: distributed_pipeline_stats would connect to
	# every node at each look, which costs the nodes more than the looks here
	until [ $(($(on 1 -c "$SHARD_DONE") + $(on 2 -c "$SHARD_DONE"))) = "$total" ]; do
		sleep 0.05
	done
	end=$(date +%s.%N)
	echo "$(on 1 -c "$SHARD_ROWS") $(on 2 -c "$SHARD_ROWS")" >"$DIR/per_node"
	on 0 -c "SELECT windowing.drop_pipeline('p', drop_tables => true)" >/dev/null
	until [ "$(on 1 -c "SELECT count(*) FROM windowing.pipeline WHERE shard_of = 'p'")$(on 2 -c \
		"SELECT count(*) FROM windowing.pipeline WHERE shard_of = 'p'")" = 00 ]; do
		sleep 0.1
	done
	awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }'
}

# The same pipeline on the coordinator over the plain queue.
local_run() {
	local start end total
	total=$((ROWS + KEYS))
	on 0 >/dev/null <<SQL
SELECT windowing.create_pipeline('one', 'local_events', 'ts', '{k}', $(bench_shape "$1"),
    max_out_of_orderness => '10 seconds', start => false);
CHECKPOINT;
SQL
	start=$(date +%s.%N)
	on 0 -c "SELECT windowing.resume_pipeline('one')" >/dev/null
	until [ "$(on 0 -c "SELECT rows_consumed = $total AND tick_hi IS NULL FROM windowing.pipeline
	                    WHERE name = 'one'")" = t ]; do
		sleep 0.05
	done
	end=$(date +%s.%N)
	on 0 -c "SELECT windowing.drop_pipeline('one', drop_tables => true)" >/dev/null
	awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }'
}

main() {
	local pkglib
	need_packages
	pkglib=$("$PG_CONFIG" --pkglibdir)
	if [ ! -f "$pkglib/citus.so" ]; then
		say "Citus is not installed in $pkglib: build and install it first"
		exit 1
	fi
	build_and_install
	start_nodes
	say "$ROWS rows of $KEYS keys in a queue of $SHARDS shards on two worker nodes, and in a plain queue"
	on 0 >/dev/null <<SQL
SET citus.shard_count = $SHARDS;
CREATE TABLE events (k int, ts timestamptz, v int);
SELECT create_distributed_table('events', 'k');
SELECT windowing.alter_queue('events', 'keep');
SELECT windowing.create_queue('local_events', 'k int, ts timestamptz, v int', retention => 'keep');
SQL
	fill events
	fill local_events
	on 0 -c "VACUUM ANALYZE local_events" >/dev/null
	on 1 -c "VACUUM ANALYZE" >/dev/null
	on 2 -c "VACUUM ANALYZE" >/dev/null
	printf '%-9s %-28s %8s %14s %12s\n' shape where seconds min-max rows/s
	local shape
	for shape in $SHAPES; do
		measure "$shape"
	done
}

# RUNS runs of shape $1 on the cluster and on one node, and their figures.
measure() {
	local run d l dists='' locals='' nodes='' dm dmin dmax lm lmin lmax n1 n2
	for run in $(seq "$RUNS"); do
		d=$(distributed_run "$1")
		nodes="$nodes $(cat "$DIR/per_node")"
		l=$(local_run "$1")
		say "$1, run $run: two worker nodes $d s, one node $l s"
		dists="$dists $d"
		locals="$locals $l"
	done
	read -r dm dmin dmax <<<"$(stats "$dists")"
	read -r lm lmin lmax <<<"$(stats "$locals")"
	read -r n1 n2 _ <<<"$nodes"
	printf '%-9s %-28s %8s %14s %12s\n' "$1" "one node (the baseline)" "$lm" "$lmin-$lmax" "$(rate $((ROWS + KEYS)) "$lm")"
	printf '%-9s %-28s %8s %14s %12s\n' "$1" "two worker nodes" "$dm" "$dmin-$dmax" "$(rate $((ROWS + KEYS)) "$dm")"
	printf '%-9s %-28s %8s %14s %12s\n' "$1" "  of which worker node 1" "" "" "$(rate "$n1" "$dm")"
	printf '%-9s %-28s %8s %14s %12s\n' "$1" "  of which worker node 2" "" "" "$(rate "$n2" "$dm")"
	printf '%-9s ratio two worker nodes / one node: %s\n' "$1" "$(ratio "$lm" "$dm")"
}

main
