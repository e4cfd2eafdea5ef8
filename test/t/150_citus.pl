# windowing beside Citus: a coordinator and two workers, each with both
# libraries preloaded.  A queue that is a plain table of a node (the
# coordinator's, or a worker's) runs pipelines there as on any server.  A
# pipeline over a hash-distributed queue runs as a pipeline per shard on the
# node that holds it, writing co-located result shards: with four producers
# COPYing (and trying again what fails), a node's worker killed and a
# worker node stopped at once and started again, the queue gets every row
# once and the results equal a GROUP BY of its rows and a pipeline on one
# node over the same rows.  Other Citus tables are
# refused as queues.  Skipped where Citus is not installed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use IPC::Run;
use Windowing qw(differences kill_worker);

my $coordinator = PostgreSQL::Test::Cluster->new('coordinator');
my $pkglibdir = $coordinator->config_data('--pkglibdir');
plan skip_all => "Citus is not installed in $pkglibdir" unless -f "$pkglibdir/citus.so";

my @workers = map { PostgreSQL::Test::Cluster->new("citus_worker$_") } 1 .. 2;
for my $node ($coordinator, @workers)
{
	$node->init;
	$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'citus,windowing'
max_worker_processes = 32
windowing.poll_interval = 20
restart_after_crash = on
citus.recover_2pc_interval = '1s'
});
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION citus');
}
$coordinator->safe_psql('postgres', sprintf("SELECT citus_set_coordinator_host('%s', %d)",
		$coordinator->host, $coordinator->port));
$coordinator->safe_psql('postgres', sprintf("SELECT citus_add_node('%s', %d)", $_->host, $_->port))
  for @workers;
is($coordinator->safe_psql('postgres', 'SELECT count(*) FROM citus_get_active_worker_nodes()'),
	'2', 'a coordinator and two workers');

# created on the coordinator, the extension is created on the workers too
$coordinator->safe_psql('postgres', 'CREATE EXTENSION windowing');
is($workers[0]->safe_psql('postgres',
		q{SELECT extversion = (SELECT default_version FROM pg_available_extensions WHERE name = 'windowing')
		  FROM pg_extension WHERE extname = 'windowing'}),
	't', 'the extension is on the workers too');

# a plain table of a node is a queue there, read by the node's own worker
sub pipeline_on
{
	my ($node, $what) = @_;
	$node->safe_psql('postgres', q{
		SELECT windowing.create_queue('local_clicks', 'k int, ts timestamptz, v int', retention => 'keep');
		SELECT windowing.create_pipeline('per_minute', 'local_clicks', 'ts', '{k}',
			windowing.tumbling('1 minute'), 'count(*) AS n, sum(v) AS total');
		INSERT INTO local_clicks SELECT g % 7, '2026-01-01 00:00+00'::timestamptz + g * interval '3 seconds', g
		FROM generate_series(1, 1000) g;
	});
	ok($node->poll_query_until('postgres', q{
		SELECT count(*) > 0 AND bool_and(backlog_rows = 0) FROM windowing.pipeline_stats
		WHERE name = 'per_minute'}), "$what: the node's worker reads its queue");
	my $group_by = q{
		SELECT k, windowing.tumble_start(ts, '1 minute') AS window_start, count(*) AS n, sum(v) AS total
		FROM local_clicks GROUP BY 1, 2
		HAVING windowing.tumble_start(ts, '1 minute') + interval '1 minute' <= (SELECT max(ts) FROM local_clicks)};
	ok($node->poll_query_until('postgres', qq{
		WITH r AS (SELECT k, window_start, n, total FROM per_minute_results), o AS ($group_by)
		SELECT count(*) = 0 FROM ((TABLE r EXCEPT ALL TABLE o) UNION ALL (TABLE o EXCEPT ALL TABLE r)) d}),
		"$what: the windows the watermark closed are the GROUP BY of their rows");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM per_minute_results'), '350',
		"$what: 7 keys' 50 minutes fired");
}
pipeline_on($coordinator, 'on the coordinator');
pipeline_on($workers[1], 'on a worker node');

# other Citus tables are no queues, and say so
$coordinator->safe_psql('postgres', q{
	CREATE TABLE ref_clicks (k int, ts timestamptz, v int);
	SELECT create_reference_table('ref_clicks');
});
my ($rc, $out, $err) = $coordinator->psql('postgres',
	q{SELECT windowing.alter_queue('ref_clicks', 'keep')});
like($err, qr/ERROR:  table (public\.)?ref_clicks is a Citus table/, 'a reference table is refused as a queue');

# a distributed queue: rows already there are read too
$coordinator->safe_psql('postgres', q{
	CREATE TABLE clicks (k int, ts timestamptz, v int);
	SELECT create_distributed_table('clicks', 'k', shard_count => 8);
	INSERT INTO clicks SELECT g % 97, '2026-01-01 00:00+00'::timestamptz + g * interval '1 second', g
	FROM generate_series(-199, 0) g;
});
($rc, $out, $err) = $coordinator->psql('postgres', q{
	SELECT windowing.create_pipeline('by_v', 'clicks', 'ts', '{v}', windowing.tumbling('1 minute'),
		retention => 'keep')});
like($err, qr/ERROR:  the key columns of a pipeline over distributed table (public\.)?clicks must include its distribution column "k"/,
	'a pipeline keys its windows by the distribution column');
($rc, $out, $err) = $coordinator->psql('postgres', q{
	SELECT windowing.create_pipeline('two', 'clicks', 'ts', '{k}', windowing.tumbling('1 minute'),
		retention => 'keep', parallelism => 2)});
like($err, qr/ERROR:  a pipeline over distributed table (public\.)?clicks runs as a pipeline per shard/,
	'and runs as a pipeline per shard');
is($coordinator->safe_psql('postgres', q{SELECT count(*) FROM pg_trigger
	WHERE tgrelid = 'clicks'::regclass AND NOT tgisinternal}), '0', 'the refusals leave the table as it was');

# late rows are kept for ever, and re-fire their windows: whatever the
# producers' interleaving, each window ends as the GROUP BY of its rows
my %assigner = (
	tumbling => q{windowing.tumbling('1 minute')},
	hopping => q{windowing.hopping('2 minutes', '1 minute')},
	sessions => q{windowing.session('3 minutes')});
for my $name (sort keys %assigner)
{
	$coordinator->safe_psql('postgres', qq{
		SELECT windowing.create_pipeline('$name', 'clicks', 'ts', '{k}', $assigner{$name},
			'count(*) AS n, sum(v) AS total', allowed_lateness => '100 days', retention => 'keep')});
}
is($coordinator->safe_psql('postgres', q{SELECT string_agg(queue || ' ' || retention || ' '
	|| array_to_string(pipelines, ','), '; ') FROM windowing.queues WHERE queue = 'clicks'::regclass}),
	'clicks keep hopping,sessions,tumbling', 'the distributed queue and its pipelines');
ok($coordinator->poll_query_until('postgres', q{SELECT count(*) = 27 FROM windowing.distributed_pipeline_stats}),
	"each node's worker makes the pipelines of its shards (3 pipelines of 8 shards, and their totals)");
is($coordinator->safe_psql('postgres', q{SELECT string_agg(DISTINCT node, ',' ORDER BY node)
	FROM windowing.distributed_pipeline_stats}),
	join(',', map { $_->host . ':' . $_->port } @workers), 'on the two worker nodes');

# four producers, each COPYing a batch of 40 rows at a time, over
# interleaved times; a batch that fails (its node is down) is tried again
# until it is in: Citus's COPY commits on every node or on none
my @producers;
for my $p (0 .. 3)
{
	my $script = '';
	for my $i (0 .. 149)
	{
		my $lo = ($i * 4 + $p) * 40 + 1;
		my $file = $coordinator->basedir . "/batch$p-$i.tsv";
		open(my $fh, '>', $file) or die $!;
		for my $g ($lo .. $lo + 39)
		{
			my @t = gmtime(1767225600 + $g);
			printf $fh "%d\t%04d-%02d-%02d %02d:%02d:%02d+00\t%d\n", $g % 97,
				$t[5] + 1900, $t[4] + 1, @t[3, 2, 1, 0], $g;
		}
		close $fh;
		$script .= "n=0; until psql -X -q -d \"\$1\" -c \"\\\\copy clicks (k, ts, v) FROM '$file'\" 2>/dev/null; "
		  . "do n=\$((n + 1)); [ \$n -lt 600 ] || exit 1; sleep 0.1; done\n";
	}
	my $file = $coordinator->basedir . "/producer$p.sh";
	open(my $fh, '>', $file) or die $!;
	print $fh $script;
	close $fh;
	push @producers, IPC::Run::start([ 'bash', $file, $coordinator->connstr('postgres') ],
		'>', \my $stdout, '2>', \my $stderr);
}
$coordinator->poll_query_until('postgres', 'SELECT count(*) >= 6000 FROM clicks') or die 'no rows';
my $pid = $workers[0]->safe_psql('postgres',
	q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'windowing worker'});
ok($pid && kill_worker($workers[0], $pid), "a node's worker is killed while the producers write");
$coordinator->poll_query_until('postgres', 'SELECT count(*) >= 12000 FROM clicks') or die 'no rows';
$workers[1]->stop('immediate');
$workers[1]->start;
ok((!grep { !$_->finish } @producers), 'the producers got every batch in');
# a node that stopped between a COPY's PREPARE and its COMMIT PREPARED
# keeps the transaction prepared until Citus recovers it: its rows are in
# the queue only then, and would come after the rows below, late
$coordinator->safe_psql('postgres', 'SELECT recover_prepared_transactions()');
for my $node (@workers)
{
	$node->poll_query_until('postgres', 'SELECT count(*) = 0 FROM pg_prepared_xacts')
	  or die 'prepared transactions left';
}
# a row of every key past every window closes them on every shard
$coordinator->safe_psql('postgres', q{
	INSERT INTO clicks SELECT g, '2027-01-01 00:00+00', 0 FROM generate_series(0, 96) g});
is($coordinator->safe_psql('postgres', q{SELECT count(*) || ' ' || count(DISTINCT v) FROM clicks
	WHERE v > 0}), '24000 24000', 'the queue got each batch once');
ok($coordinator->poll_query_until('postgres', q{
	SELECT count(*) = 24 AND bool_and(watermark_time > '2026-12-31') AND sum(backlog_rows) = 0
	FROM windowing.distributed_pipeline_stats WHERE node IS NOT NULL}),
	'every shard of every pipeline read its rows');

# the results, beside the same windows in plain SQL over the queue's rows
$coordinator->safe_psql('postgres', q{
	CREATE TABLE all_clicks AS SELECT k, ts, v FROM clicks WHERE ts < '2027-01-01'});
my %group_by = (
	tumbling => q{SELECT k, windowing.tumble_start(ts, '1 minute'), count(*), sum(v)
		FROM all_clicks GROUP BY 1, 2},
	hopping => q{SELECT k, w.window_start, count(*), sum(v)
		FROM all_clicks, windowing.hop(ts, '2 minutes', '1 minute') w GROUP BY 1, 2},
	sessions => q{SELECT k, (s).window_start, count(*), sum(v)
		FROM (SELECT k, v, windowing.session(ts, '3 minutes') OVER (PARTITION BY k) AS s FROM all_clicks) x
		GROUP BY 1, 2});
for my $name (sort keys %group_by)
{
	$coordinator->safe_psql('postgres', qq{
		CREATE TABLE ${name}_got AS SELECT k, window_start, n, total FROM ${name}_results
		WHERE window_start < '2027-01-01'});
	is(differences($coordinator, 'postgres', "TABLE ${name}_got", $group_by{$name}), '0',
		"$name: each window is the GROUP BY of its rows, none lost or doubled");
}
cmp_ok($coordinator->safe_psql('postgres', 'SELECT count(*) FROM tumbling_got'), '>', 9000,
	'tumbling: the windows of the run');

# a pipeline on one server over the same rows gives the same windows
$coordinator->safe_psql('postgres', q{
	SELECT windowing.create_queue('one_node', 'k int, ts timestamptz, v int', retention => 'keep');
	SELECT windowing.create_pipeline('one', 'one_node', 'ts', '{k}', windowing.tumbling('1 minute'),
		'count(*) AS n, sum(v) AS total', allowed_lateness => '100 days', start => false);
	INSERT INTO one_node SELECT k, ts, v FROM clicks ORDER BY ts;});
$coordinator->poll_query_until('postgres', q{SELECT windowing.process('one') = 0}) or die 'not read';
is(differences($coordinator, 'postgres', 'TABLE tumbling_got',
	q{SELECT k, window_start, n, total FROM one_results WHERE window_start < '2027-01-01'}), '0',
	'tumbling: the windows of a pipeline on one node');

# pipeline_stats of the shards add up to the whole
is($coordinator->safe_psql('postgres', q{
	SELECT sum(rows_consumed) FILTER (WHERE node IS NULL) = sum(rows_consumed) FILTER (WHERE node IS NOT NULL)
	   AND sum(rows_consumed) FILTER (WHERE node IS NULL) = 3 * (SELECT count(*) FROM clicks)
	FROM windowing.distributed_pipeline_stats}), 't', 'every row read once by each pipeline');

# a shard moved elsewhere would leave its pipeline's cursor and state behind
my ($shard, $host, $from) = split /\|/, $coordinator->safe_psql('postgres', q{
	SELECT shardid, nodename, nodeport FROM citus_shards WHERE table_name = 'clicks'::regclass
	ORDER BY shardid LIMIT 1});
my ($to) = grep { $_ != $from } map { $_->port } @workers;
my $move = "SELECT citus_move_shard_placement($shard, '$host', $from, '$host', $to, 'block_writes')";
($rc, $out, $err) = $coordinator->psql('postgres', $move);
like($err, qr/ERROR:  cannot run citus_move_shard_placement while pipelines run over distributed tables/,
	'a shard move is refused while pipelines run');
($rc, $out, $err) = $coordinator->psql('postgres', q{SELECT * FROM rebalance_table_shards('clicks')});
like($err, qr/ERROR:  cannot run rebalance_table_shards while pipelines run over distributed tables/,
	'and so is a rebalance');

# other changes than drop_pipeline are the shards' own
($rc, $out, $err) = $coordinator->psql('postgres', q{SELECT windowing.pause_pipeline('hopping')});
like($err, qr/ERROR:  pipeline "hopping" runs on the shards of a distributed table/,
	'a pipeline over a distributed queue is paused shard by shard');
# Dropping a pipeline drops its trigger on the distributed table, which
# locks every shard.  The nodes' workers leave a shard whose lock is asked
# for to a later round, so Citus's deadlock detection, which takes all of
# a node's local processes for one transaction, finds no cycle through
# them; should it cancel the drop all the same, the docs say to run it
# again, and so does this.
sub dropping
{
	my ($sql, $what) = @_;
	my ($rc, $out, $err);
	for my $try (1 .. 5)
	{
		($rc, $out, $err) = $coordinator->psql('postgres', $sql);
		last if $rc == 0 || $err !~ /distributed deadlock/;
		note "$what met a distributed deadlock, tried again";
	}
	is($rc, 0, $what) or diag($err);
}
sub drop_distributed
{
	my ($name, $args) = @_;
	dropping("SELECT windowing.drop_pipeline('$name'$args)", "pipeline $name dropped");
}
drop_distributed('hopping', ', drop_tables => true');
ok($workers[0]->poll_query_until('postgres', q{SELECT count(*) = 0 FROM windowing.pipeline
	WHERE shard_of = 'hopping'}), "dropped, its shards' pipelines go");
is($coordinator->safe_psql('postgres', q{SELECT count(*) FROM windowing.distributed_pipeline_stats
	WHERE name = 'hopping'}), '0', 'and its stats');
is($coordinator->safe_psql('postgres', q{SELECT to_regclass('hopping_results') IS NULL}), 't',
	'and its tables');

# without pipelines over distributed tables, Citus's rebalancer runs again
# (its shards are balanced already: it moves none)
drop_distributed($_, '') for 'tumbling', 'sessions';
($rc, $out, $err) = $coordinator->psql('postgres', q{SELECT * FROM rebalance_table_shards('clicks')});
is($rc, 0, 'the rebalancer runs once no pipeline reads the shards');

# the docs' example (pipelines.md, Distributed queues)
$coordinator->safe_psql('postgres', q{
CREATE TABLE purchases (user_id bigint, ts timestamptz, amount int);
SELECT create_distributed_table('purchases', 'user_id');
SELECT windowing.create_pipeline('per_user', 'purchases', 'ts', '{user_id}',
    windowing.tumbling('1 minute'), 'count(*) AS n, sum(amount) AS total',
    retention => 'consume', idle_timeout => '1 second');
-- producers write to purchases on the coordinator (or any node), as to any table
INSERT INTO purchases SELECT u, '2026-01-01 12:00+00'::timestamptz + m * interval '1 minute', 10
FROM generate_series(1, 4) u, generate_series(0, 2) m;
});
ok($coordinator->poll_query_until('postgres', q{SELECT count(*) = 12 FROM per_user_results}),
	"the docs' example: each user's minutes fired, the last once every shard was idle");
my $example = q{
SELECT user_id, window_start, n, total FROM per_user_results ORDER BY 1, 2;
SELECT node, shard_pipeline, rows_consumed, windows_fired
FROM windowing.distributed_pipeline_stats WHERE name = 'per_user' ORDER BY 1, 2;
};
my @lines = split /\n/, $coordinator->safe_psql('postgres', $example);
is(scalar(grep { /^\d\|2026-01-01 12:0[012]:00\+00\|1\|10$/ } @lines), 12, "the docs' example: its results");
is($lines[-1], '||12|12', "the docs' example: the whole pipeline's row sorts last");

# one watermark for all the shards of a pipeline, the least of theirs: a
# shard's windows wait for the other shards' rows, and a row is late only
# for that watermark
$coordinator->safe_psql('postgres', q{
	CREATE TABLE readings (k int, ts timestamptz, v int);
	SELECT create_distributed_table('readings', 'k', shard_count => 2);
	SELECT windowing.create_pipeline('agreed', 'readings', 'ts', '{k}', windowing.tumbling('1 minute'),
		'count(*) AS n', retention => 'keep');
});
my ($ka, $kb) = split /\n/, $coordinator->safe_psql('postgres', q{
	SELECT min(k) FROM generate_series(1, 100) k
	GROUP BY get_shard_id_for_distribution_column('readings', k) ORDER BY 1});
sub readings
{
	my ($rows, $results, $what) = @_;
	$coordinator->safe_psql('postgres', "INSERT INTO readings VALUES $rows");
	ok($coordinator->poll_query_until('postgres', qq{
		SELECT string_agg(k || ' ' || to_char(window_start AT TIME ZONE 'UTC', 'HH24:MI'), ', '
		                  ORDER BY window_start, k) IS NOT DISTINCT FROM $results
		FROM agreed_results}), $what);
}
$coordinator->safe_psql('postgres', "INSERT INTO readings VALUES ($ka, '2026-01-01 00:00:10+00', 1), ($ka, '2026-01-01 00:05:00+00', 1)");
$coordinator->poll_query_until('postgres', q{SELECT sum(rows_consumed) = 2 FROM windowing.distributed_pipeline_stats
	WHERE name = 'agreed' AND node IS NOT NULL}) or die 'not read';
sleep 1;
is($coordinator->safe_psql('postgres', 'SELECT count(*) FROM agreed_results'), '0',
	'a shard without rows holds every window back');
readings("($kb, '2026-01-01 00:02:30+00', 1)", "'$ka 00:00'", 'the least of the shards\' watermarks fires');
readings("($kb, '2026-01-01 00:10:00+00', 1)", "'$ka 00:00, $kb 00:02'", 'and moves with it');
# 00:06 is behind its own shard's 00:10, not behind the least, 00:05
$coordinator->safe_psql('postgres', "INSERT INTO readings VALUES ($kb, '2026-01-01 00:06:00+00', 1)");
$coordinator->poll_query_until('postgres', q{SELECT sum(rows_consumed) = 5 FROM windowing.distributed_pipeline_stats
	WHERE name = 'agreed' AND node IS NOT NULL}) or die 'not read';
readings("($ka, '2026-01-01 00:20:00+00', 1)", "'$ka 00:00, $kb 00:02, $ka 00:05, $kb 00:06'",
	'a row behind its own shard but not behind the least watermark is on time');
is($coordinator->safe_psql('postgres', 'SELECT count(*) FROM agreed_late'), '0', 'no row was late');

# the shards' input watermarks are exchanged through a reference table,
# which every node reads from its own copy: the exchanges, ten a second,
# open no connections between the nodes
is($workers[1]->safe_psql('postgres', q{SELECT string_agg(('2000-01-01 00:00+00'::timestamptz
	+ input_watermark * interval '1 microsecond') AT TIME ZONE 'UTC' || '', ', ' ORDER BY input_watermark)
	FROM windowing.shard_progress WHERE shard_of = 'agreed'}),
	'2026-01-01 00:09:59.999999, 2026-01-01 00:19:59.999999',
	'each shard\'s input watermark is in windowing.shard_progress');
my $sessions = q{SELECT sessions FROM pg_stat_database WHERE datname = current_database()};
my $before = $workers[0]->safe_psql('postgres', $sessions);
sleep 3;
cmp_ok($workers[0]->safe_psql('postgres', $sessions) - $before, '<', 5,
	'exchanging watermarks opens no sessions on the nodes');
# anyone may call the function that drop_pipeline uses to delete them: it
# leaves a live pipeline's alone
is($coordinator->safe_psql('postgres', q{
	BEGIN;
	SELECT windowing._shard_progress_reset('agreed');
	SELECT count(*) FROM windowing.shard_progress WHERE shard_of = 'agreed';
	COMMIT;}), "\n2", 'a live pipeline\'s watermarks stay');
drop_distributed('agreed', '');
is($workers[0]->safe_psql('postgres', q{SELECT count(*) FROM windowing.shard_progress WHERE shard_of = 'agreed'}),
	'0', 'drop_pipeline deletes its shards\' watermarks');

# a distributed pipeline dropped and made again at once under its name:
# each node's worker replaces its shards' pipelines, which were the first's
# (its definition, state and cursor) and wrote its watermarks
$coordinator->safe_psql('postgres', q{
	SELECT windowing.create_pipeline('again', 'readings', 'ts', '{k}', windowing.tumbling('1 minute'),
		'count(*) AS n', retention => 'keep')});
$coordinator->poll_query_until('postgres', q{SELECT count(*) = 2 FROM windowing.distributed_pipeline_stats
	WHERE name = 'again' AND node IS NOT NULL}) or die 'no shard pipelines';
dropping(q{
	BEGIN;
	SELECT windowing.drop_pipeline('again', drop_tables => true);
	SELECT windowing.create_pipeline('again', 'readings', 'ts', '{k}', windowing.tumbling('5 minutes'),
		'count(*) AS n', retention => 'keep');
	COMMIT;
}, 'dropped and made again in one transaction');
ok($coordinator->poll_query_until('postgres', qq{
	SELECT string_agg(k || ' ' || to_char(window_start AT TIME ZONE 'UTC', 'HH24:MI'), ', '
	                  ORDER BY window_start, k) = '$ka 00:00, $kb 00:00, $ka 00:05, $kb 00:05'
	FROM again_results}), 'made again at once, its shards run the new definition');
my $again = $coordinator->safe_psql('postgres', q{SELECT id FROM windowing.distributed_pipeline
	WHERE name = 'again'});
my ($new, $all) = (0, 0);
for my $node (@workers)
{
	my ($n, $a) = split /\|/, $node->safe_psql('postgres', qq{
		SELECT count(*) FILTER (WHERE shard_of_id = $again), count(*) FROM windowing.pipeline
		WHERE shard_of = 'again'});
	$new += $n;
	$all += $a;
}
is("$new/$all", '2/2', "its shards' pipelines are the new pipeline's");

$_->stop for @workers, $coordinator;
done_testing();
