# windowing beside Citus: a coordinator and two workers, each with both
# libraries preloaded.  A queue that is a plain table of a node (the
# coordinator's, or a worker's) runs pipelines there as on any server; a
# distributed table is refused as a queue, clearly, rather than read where
# its rows are not.  Skipped where Citus is not installed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;

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

# a distributed table is no queue, and says so
$coordinator->safe_psql('postgres', q{
	CREATE TABLE dist_clicks (k int, ts timestamptz, v int);
	SELECT create_distributed_table('dist_clicks', 'k');
});
my ($rc, $out, $err) = $coordinator->psql('postgres',
	q{SELECT windowing.alter_queue('dist_clicks', 'keep')});
like($err, qr/ERROR:  table (public\.)?dist_clicks is a Citus table/, 'a distributed table is refused as a queue');
($rc, $out, $err) = $coordinator->psql('postgres', q{
	SELECT windowing.create_pipeline('dist', 'dist_clicks', 'ts', '{k}', windowing.tumbling('1 minute'),
		retention => 'keep')});
like($err, qr/ERROR:  table (public\.)?dist_clicks is a Citus table/, 'and so is a pipeline over it');
is($coordinator->safe_psql('postgres', q{SELECT count(*) FROM pg_trigger
	WHERE tgrelid = 'dist_clicks'::regclass AND NOT tgisinternal}),
	'0', 'the distributed table is left as it was');

$_->stop for @workers, $coordinator;
done_testing();
