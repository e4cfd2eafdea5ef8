# What happens to running pipelines when what they live in goes away, with
# the worker busy in a step:
# - DROP EXTENSION is refused while queues and late tables depend on it;
#   with CASCADE it waits for the step, and the worker leaves quietly;
#   producers keep inserting into the queue.
# - DROP DATABASE succeeds even in the middle of a round of long steps:
#   the worker looks for a waiting DROP before every step.
# - DROP ROLE of a pipeline's owner is refused while the role owns the
#   pipeline's tables.  A role dropped after REASSIGN OWNED leaves its
#   pipelines failed with the reason, until a superuser hands them to
#   another role; after DROP OWNED they fail for want of their tables.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use Windowing qw(worker_node differences);

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
    windowing.tumbling('100 milliseconds'), 'public.slow_sum(v) AS total', retention => 'consume');
INSERT INTO events SELECT i % 3, i, i FROM generate_series(1, 1500) i;});
wait_for_step_of('ext', 'slow');
my ($ret, $out, $err) = $node->psql('ext', 'DROP EXTENSION windowing');
like($err, qr/ERROR:  cannot drop extension windowing because other objects depend on it
DETAIL:  column missed_windows of table slow_late depends on type windowing.bigint_window\[\]
trigger windowing_wake on table events depends on function windowing._queue_rows_added\(\)/,
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
is($err, '', 'and producers go on inserting: its columns need nothing of the extension');
is($node->safe_psql('ext', 'SELECT max(windowing_seq) FROM events'), '3001',
	'numbered by its own sequence');

# DROP DATABASE while the worker has a round of ten one-second steps ahead.
create_database('busy');
$node->safe_psql('busy', q{
SELECT windowing.create_pipeline(format('p%s', i), 'events', 'ts', '{k}',
    windowing.tumbling('100 milliseconds'), 'public.slow_sum(v) AS total', retention => 'consume')
FROM generate_series(1, 10) i;
INSERT INTO events SELECT i % 3, i, i FROM generate_series(1, 1000) i;});
wait_for_step_of('busy', 'p1');
($ret, $out, $err) = $node->psql('postgres', 'DROP DATABASE busy');
is($ret, 0, 'DROP DATABASE succeeds in the middle of a round of long steps');
is($err, '', 'without an error');
ok($node->poll_query_until('postgres', worker_in('busy'), '0'), 'and no worker is left behind');

# DROP ROLE of an owner: refused, as the role owns the pipeline's tables.
$node->safe_psql('postgres', 'CREATE ROLE carol; CREATE ROLE dave');
create_database('own');
$node->safe_psql('own', q{
SET ROLE carol;
CREATE TABLE mine (k int, ts bigint, v int);
SELECT windowing.create_pipeline('mine', 'mine', 'ts', '{k}', windowing.tumbling('100 milliseconds'),
    'count(*) AS n, sum(v) AS total', retention => 'consume');
INSERT INTO mine SELECT i % 3, i, i FROM generate_series(1, 1000) i;});
ok($node->poll_query_until('own',
		q{SELECT rows_consumed = 1000 FROM windowing.pipeline_stats WHERE name = 'mine'}),
	'carol\'s pipeline runs');
($ret, $out, $err) = $node->psql('own', 'DROP ROLE carol');
like($err, qr/ERROR:  role "carol" cannot be dropped because some objects depend on it
DETAIL:  owner of table mine
owner of sequence mine_windowing_seq_seq
owner of table mine_results
owner of table mine_late/, 'DROP ROLE of the owner is refused, naming the pipeline\'s tables');

# REASSIGN OWNED moves the tables, not the pipeline; once the role is
# dropped, the pipeline fails with the reason.
$node->safe_psql('own', 'REASSIGN OWNED BY carol TO dave; DROP OWNED BY carol; DROP ROLE carol;
	INSERT INTO mine SELECT i % 3, i, i FROM generate_series(1001, 2000) i');
ok($node->poll_query_until('own',
		q{SELECT state = 'failed' FROM windowing.pipeline_stats WHERE name = 'mine'}),
	'the pipeline of a dropped role fails');
is($node->safe_psql('own',
		q{SELECT rows_consumed, last_error FROM windowing.pipeline_stats WHERE name = 'mine'}),
	'1000|owner of pipeline "mine" no longer exists', 'with the reason, and nothing consumed');
($ret, $out, $err) = $node->psql('own',
	q{SET ROLE dave; SELECT windowing.alter_pipeline_owner('mine', 'dave')});
like($err, qr/ERROR:  must be owner of pipeline "mine"/, 'the new owner cannot take it');
$node->safe_psql('own', q{SELECT windowing.alter_pipeline_owner('mine', 'dave');
	SELECT windowing.resume_pipeline('mine')});
ok($node->poll_query_until('own',
		q{SELECT rows_consumed = 2000 FROM windowing.pipeline_stats WHERE name = 'mine'}),
	'given to another role by a superuser and resumed, it goes on');
$node->safe_psql('own', q{SELECT windowing.flush('mine')});
is(differences($node, 'own', 'SELECT k, window_start, n, total FROM mine_results',
		'SELECT k, windowing.tumble_start(ts, 100), count(*), sum(v) FROM mine GROUP BY 1, 2'),
	'0', 'with every row counted once');

# DROP OWNED drops the role's tables; its pipeline fails for want of them.
# (Another database: the worker of "own" is still in the back-off of the
# failures above.)
create_database('theirs');
$node->safe_psql('theirs', q{
CREATE ROLE erin;
SET ROLE erin;
CREATE TABLE hers (k int, ts bigint);
SELECT windowing.create_pipeline('hers', 'hers', 'ts', assigner => windowing.tumbling('1 second'), retention => 'consume');});
$node->safe_psql('theirs', 'DROP OWNED BY erin');
ok($node->poll_query_until('theirs',
		q{SELECT state = 'failed' FROM windowing.pipeline_stats WHERE name = 'hers'}),
	'after DROP OWNED the pipeline fails');
is($node->safe_psql('theirs', q{SELECT last_error FROM windowing.pipeline_stats WHERE name = 'hers'}),
	'source table of pipeline "hers" no longer exists', 'for want of its queue');
($ret, $out, $err) = $node->psql('theirs', 'DROP ROLE erin');
is($ret, 0, 'and the role can be dropped');
$node->safe_psql('theirs', q{SELECT windowing.drop_pipeline('hers')});

$node->stop;
done_testing();
