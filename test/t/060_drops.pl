# What happens to running pipelines when what they live in goes away, with
# the worker busy in a step:
# - DROP EXTENSION is refused while queues and late tables depend on it;
#   with CASCADE it waits for the step, and the worker leaves quietly.
# - DROP DATABASE succeeds even in the middle of a round of long steps:
#   the worker looks for a waiting DROP before every step.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use Windowing qw(worker_node);

my $node = worker_node('drops', q{
windowing.poll_interval = 20ms
log_min_messages = debug1
});

# An aggregate that takes about a millisecond a row, so that steps are long.
sub create_database
{
	my ($db) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, q{
CREATE EXTENSION windowing;
GRANT CREATE ON SCHEMA public TO PUBLIC;
CREATE FUNCTION slow_add(bigint, int) RETURNS bigint LANGUAGE plpgsql
AS $$ BEGIN PERFORM pg_sleep(0.001); RETURN $1 + $2; END $$;
CREATE AGGREGATE slow_sum(int) (SFUNC = slow_add, STYPE = bigint, INITCOND = '0');
CREATE TABLE events (k int, ts bigint, v int);});
}

sub worker_in
{
	my ($db) = @_;
	return qq{SELECT count(*) FROM pg_stat_activity
		WHERE backend_type = 'windowing worker' AND datname = '$db'};
}

sub wait_for_step_of
{
	my ($db, $name) = @_;
	$node->poll_query_until('postgres', qq{SELECT count(*) = 1 FROM pg_stat_activity
		WHERE backend_type = 'windowing worker' AND datname = '$db'
		AND query = 'step of pipeline "$name"'})
	  or die "no step of $name";
}

# DROP EXTENSION, refused and then with CASCADE, while a step runs.
create_database('ext');
$node->safe_psql('ext', q{
SELECT windowing.create_pipeline('slow', 'events', 'ts', '{k}',
    windowing.tumbling('100 milliseconds'), 'public.slow_sum(v) AS total');
INSERT INTO events SELECT i % 3, i, i FROM generate_series(1, 1500) i;});
wait_for_step_of('ext', 'slow');
my ($ret, $out, $err) = $node->psql('ext', 'DROP EXTENSION windowing');
like($err, qr/ERROR:  cannot drop extension windowing because other objects depend on it
DETAIL:  column missed_windows of table slow_late depends on type windowing.bigint_window\[\]
default value for column windowing_seq of table events depends on sequence windowing.queue_seq/,
	'DROP EXTENSION is refused while a queue and a late table use its objects');
ok($node->poll_query_until('ext',
		q{SELECT rows_consumed = 1500 FROM windowing.pipeline_stats WHERE name = 'slow'}),
	'and the pipeline goes on');

$node->safe_psql('ext', 'INSERT INTO events SELECT i % 3, i, i FROM generate_series(1501, 3000) i');
wait_for_step_of('ext', 'slow');
my $log_offset = -s $node->logfile;
($ret, $out, $err) = $node->psql('ext', 'DROP EXTENSION windowing CASCADE');
is($ret, 0, 'DROP EXTENSION CASCADE succeeds while a step runs');
ok($node->poll_query_until('ext', worker_in('ext'), '0'), 'the worker leaves');
my $log = slurp_file($node->logfile, $log_offset);
like($log, qr/windowing worker for database "ext" leaves: no extension with pipelines/,
	'saying why');
unlike($log, qr/ERROR|exited with exit code 1/, 'without an error');
is($node->safe_psql('ext', 'SELECT count(*) FROM events'), '3000', 'the queue keeps its rows');
($ret, $out, $err) = $node->psql('ext', 'INSERT INTO events VALUES (1, 1, 1)');
like($err, qr/null value in column "windowing_seq" of relation "events" violates not-null constraint/,
	'and its arrival numbers lost their default: producers must drop the columns');
$node->safe_psql('ext', 'ALTER TABLE events DROP COLUMN windowing_xid, DROP COLUMN windowing_seq;
	INSERT INTO events VALUES (1, 1, 1)');

# DROP DATABASE while the worker has a round of ten one-second steps ahead.
create_database('busy');
$node->safe_psql('busy', q{
SELECT windowing.create_pipeline(format('p%s', i), 'events', 'ts', '{k}',
    windowing.tumbling('100 milliseconds'), 'public.slow_sum(v) AS total')
FROM generate_series(1, 10) i;
INSERT INTO events SELECT i % 3, i, i FROM generate_series(1, 1000) i;});
wait_for_step_of('busy', 'p1');
($ret, $out, $err) = $node->psql('postgres', 'DROP DATABASE busy');
is($ret, 0, 'DROP DATABASE succeeds in the middle of a round of long steps');
is($err, '', 'without an error');
ok($node->poll_query_until('postgres', worker_in('busy'), '0'), 'and no worker is left behind');

$node->stop;
done_testing();
