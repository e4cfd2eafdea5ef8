# A library newer than its database's extension, as after installing a new
# release without running ALTER EXTENSION windowing UPDATE.  The worker
# cannot run the pipelines (it would misread their catalog): it logs why
# and leaves for the launcher's back-off, so producers' inserts restart it
# at most once a second, and counts no failure against the pipelines,
# which are not at fault.  The update wakes it, and the pipelines go on
# with every row.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FindBin;
use lib $FindBin::RealBin;
use Windowing qw(worker_node);

my $node = worker_node('version', q{
windowing.poll_interval = 20ms
});
my $mismatch = qr/ERROR:  windowing's library is version [0-9.]+ but the database has version 0\.4 of the extension\n.*HINT:  Run ALTER EXTENSION windowing UPDATE\./;

my $log_offset = -s $node->logfile;
$node->safe_psql('postgres', q{
CREATE EXTENSION windowing VERSION '0.4';
CREATE TABLE events (k int, ts bigint);
SELECT windowing.create_pipeline('p', 'events', 'ts', '{k}', windowing.tumbling('100 milliseconds'));});
# three seconds of producers, each insert waking the worker
for my $i (1 .. 15)
{
	$node->safe_psql('postgres', "INSERT INTO events SELECT i % 3, $i * 100 + i FROM generate_series(1, 10) i");
	usleep(200_000);
}
my $log = slurp_file($node->logfile, $log_offset);
my $refusals = () = $log =~ /$mismatch/g;
cmp_ok($refusals, '>=', 1, 'the worker logs why it cannot run the pipelines');
cmp_ok($refusals, '<=', 5, 'and is restarted at most once a second meanwhile');
unlike($log, qr/column .* does not exist/, 'no step ran against the old catalog');
is($node->safe_psql('postgres', 'SELECT state, rows_consumed, failures FROM windowing.pipeline_stats'),
	'running|0|0', 'the pipeline is not counted failed');

$node->safe_psql('postgres', 'ALTER EXTENSION windowing UPDATE');
ok($node->poll_query_until('postgres',
		'SELECT rows_consumed = 150 FROM windowing.pipeline_stats'),
	'after the update the worker consumes every row');

$node->stop;
done_testing();
