# The background workers: the launcher, a worker only in databases with a
# running pipeline, results without any process() call, restarts after
# SIGTERM and SIGKILL, the quiet exit of a paused database, and DROP
# DATABASE with a worker connected.  Every wait polls a condition.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use Windowing qw(worker_node);

my $node = worker_node('workers', q{
windowing.poll_interval = 50
log_min_messages = debug1
});

my $workers_in_app = q{SELECT count(*) FROM pg_stat_activity
	WHERE backend_type = 'windowing worker' AND datname = 'app'};
my $worker_pid = q{SELECT pid FROM pg_stat_activity
	WHERE backend_type = 'windowing worker' AND datname = 'app'};

ok($node->poll_query_until('postgres', q{SELECT count(*) = 1 FROM pg_stat_activity
	WHERE backend_type = 'windowing launcher' AND application_name = 'windowing launcher'
	AND datname IS NULL}),
	'the launcher runs, connected to no database');

# The launcher looks at a new database at once; born with the extension
# but without a pipeline, it gets a worker that leaves, and none stays.
$node->safe_psql('template1', 'CREATE EXTENSION windowing');
my $log_offset = -s $node->logfile;
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->wait_for_log(qr/windowing worker for database "app" leaves: no running pipeline/,
	$log_offset);
is($node->safe_psql('app', $workers_in_app), '0',
	'no worker stays in a database with the extension and no pipeline');
$node->safe_psql('app', 'CREATE TABLE clicks (user_id int, ts timestamptz)');

# A pipeline created while the server runs gets a worker and results
# without any process() call.
$node->safe_psql('app', q{
	SELECT windowing.create_pipeline('per_minute', 'clicks', 'ts', '{user_id}',
		windowing.tumbling('1 minute'), retention => 'consume');
});
ok($node->poll_query_until('app', $workers_in_app, '1'),
	'a worker starts once a pipeline runs');
is($node->safe_psql('app', q{SELECT application_name FROM pg_stat_activity
	WHERE backend_type = 'windowing worker'}),
	'windowing worker', 'the worker names itself in pg_stat_activity');

# Every row of a window that ended by the last event time is counted.
my $batch = 0;
sub add_clicks_and_wait
{
	my ($what) = @_;
	my $from = 100 * $batch++;
	$node->safe_psql('app', qq{
		INSERT INTO clicks SELECT g % 3, '2026-01-01 00:00+00'::timestamptz + g * interval '10 seconds'
		FROM generate_series($from + 1, $from + 100) g;
	});
	ok($node->poll_query_until('app', q{
		SELECT (SELECT coalesce(sum(count), 0) FROM per_minute_results) =
		       (SELECT count(*) FROM clicks
		        WHERE windowing.tumble_start(ts, '1 minute') + interval '1 minute'
		              <= (SELECT max(ts) FROM clicks))}),
		$what);
}
add_clicks_and_wait('rows are consumed and windows fire with no process() call');

# SIGTERM: the worker exits (counted as a failure) and comes back after a
# back-off of a second.
my $old = $node->safe_psql('app', $worker_pid);
$node->safe_psql('postgres', "SELECT pg_terminate_backend($old)");
ok($node->poll_query_until('app', qq{SELECT count(*) = 1 FROM ($worker_pid) w WHERE pid <> $old}),
	'a worker stopped by SIGTERM is replaced');
add_clicks_and_wait('the new worker goes on where the last one stopped');

# SIGKILL: the postmaster restarts every process; launcher and worker too.
$old = $node->safe_psql('app', $worker_pid);
kill 'KILL', $old;
ok($node->poll_query_until('app', qq{SELECT count(*) = 1 FROM ($worker_pid) w WHERE pid <> $old}),
	'after a SIGKILL and the crash restart a worker runs again');
add_clicks_and_wait('and goes on from the last commit');

# A database whose pipelines are all paused keeps no worker.
$node->safe_psql('app', q{SELECT windowing.pause_pipeline('per_minute')});
ok($node->poll_query_until('app', $workers_in_app, '0'),
	'the worker leaves once nothing runs in its database');
$node->safe_psql('app', q{SELECT windowing.resume_pipeline('per_minute')});
ok($node->poll_query_until('app', $workers_in_app, '1'),
	'and comes back when a pipeline is resumed');
add_clicks_and_wait('the resumed pipeline catches up');

# A connected worker would make DROP DATABASE fail after 5 s; it leaves.
is($node->safe_psql('postgres', $workers_in_app), '1', 'a worker is connected to app');
my ($ret, $out, $err) = $node->psql('postgres', 'DROP DATABASE app');
is($ret, 0, 'DROP DATABASE succeeds while a worker is connected');
is($err, '', 'without an error');
ok($node->poll_query_until('postgres', q{SELECT count(*) = 0 FROM pg_stat_activity
	WHERE backend_type = 'windowing worker'}),
	'and no worker is left behind');

$node->stop;
done_testing();
