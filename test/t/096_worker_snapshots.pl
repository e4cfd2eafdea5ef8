# Each of the worker's steps sees what committed before it, as a statement
# in READ COMMITTED does, whatever the database's default isolation.  A
# pipeline created while the worker's round waited for the pipeline
# catalog's lock is listed by that round and stepped in it, without a
# "does not exist" error.  A database whose default_transaction_isolation
# is repeatable read or serializable, or whose transactions are read-only
# by default, still has its pipelines stepped by the worker, while
# process() in its sessions is still refused; a short lock_timeout of the
# database's does not make the worker exit while the catalog is locked.
# Every wait polls a condition (the one sleep holds a lock).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use Windowing qw(worker_node wait_for_worker);

my $node = worker_node('snapshots', q{
windowing.poll_interval = 20ms
});

# "keeper" reads nothing, so that the worker stays and its rounds open
# with the only transaction that waits for the catalog's lock: no queue
# needs emptying.
$node->safe_psql('postgres', q{
CREATE EXTENSION windowing;
CREATE TABLE kq (k int, ts timestamptz);
SELECT windowing.create_pipeline('keeper', 'kq', 'ts', '{k}', windowing.tumbling('1 minute'),
                                 retention => 'consume');
CREATE TABLE q (k int, ts timestamptz, v int);
});
wait_for_worker($node);

# Rows of batch "b", a second apart over 100 seconds from minute 2b: the
# first minute's window fires, of 60 rows whose values sum to 1770.  (The
# producer writes whatever the database's default.)
sub add_rows
{
	my ($b) = @_;
	$node->safe_psql('postgres', qq{
		SET default_transaction_read_only = off;
		INSERT INTO q SELECT 1, '2026-01-01 00:00+00'::timestamptz + interval '2 minutes' * $b
		                         + g * interval '1 second', g
		FROM generate_series(0, 99) g});
}

sub fires
{
	my ($pipeline, $b, $what) = @_;
	ok( $node->poll_query_until(
			'postgres', qq{
		SELECT n = 60 AND total = 1770 FROM ${pipeline}_results
		WHERE window_start = '2026-01-01 00:00+00'::timestamptz + interval '2 minutes' * $b}),
		$what);
	is( $node->safe_psql(
			'postgres', qq{SELECT failures, last_error IS NULL FROM windowing.pipeline WHERE name = '$pipeline'}),
		'0|t', 'and no step of it failed');
}

# The round's transaction began before the catalog's lock was granted; the
# pipeline committed meanwhile is in the round's list of running pipelines,
# and "fresh" sorts before "keeper", so the round steps it first.
my $log_offset = -s $node->logfile;
my $holder = $node->background_psql('postgres');
$holder->query_safe(
	'SET client_min_messages = warning; BEGIN; LOCK TABLE windowing.pipeline IN ACCESS EXCLUSIVE MODE');
ok( $node->poll_query_until(
		'postgres', q{
	SELECT count(*) = 1 FROM pg_stat_activity
	WHERE backend_type = 'windowing worker' AND wait_event_type = 'Lock'
	  AND query = 'looking for running pipelines'}),
	'a round of the worker waits for the lock of the pipeline catalog');
$holder->query_safe(q{
SELECT windowing.create_pipeline('fresh', 'q', 'ts', '{k}', windowing.tumbling('1 minute'),
                                 'count(*) AS n, sum(v) AS total', max_out_of_orderness => '0',
                                 retention => 'consume');
COMMIT});
$holder->quit;
add_rows(0);
fires('fresh', 0, 'a pipeline created while the round waited is stepped');
my $log = slurp_file($node->logfile, $log_offset);
unlike($log, qr/does not exist/, 'its step found it');
unlike($log, qr/exited with exit code 1/, 'the worker never exited on an error');

# The worker takes the database's settings when it connects (after the
# restart), but its steps run in READ COMMITTED and may write, which they
# need, whatever the database's defaults: a trigger on the result table
# writes each fired window into "audit" in the step's transaction.  Each default: the setting, its
# value, what sessions then show, and how process() in them is refused.
$node->safe_psql('postgres', q{
CREATE TABLE audit (window_start timestamptz, n bigint);
CREATE FUNCTION audited() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN INSERT INTO public.audit VALUES (NEW.window_start, NEW.n); RETURN NULL; END $$;
CREATE TRIGGER audited AFTER INSERT ON fresh_results FOR EACH ROW EXECUTE FUNCTION audited();
});
my $b = 0;
for my $default (
	[ 'default_transaction_isolation', 'repeatable read', 'transaction_isolation',
	  qr/pipeline steps cannot run in a REPEATABLE READ or SERIALIZABLE transaction/ ],
	[ 'default_transaction_isolation', 'serializable', 'transaction_isolation',
	  qr/pipeline steps cannot run in a REPEATABLE READ or SERIALIZABLE transaction/ ],
	[ 'default_transaction_read_only', 'on', 'transaction_read_only',
	  qr/cannot execute process\(\) in a read-only transaction/ ])
{
	my ($setting, $value, $shown, $refusal) = @$default;

	$b++;
	$node->safe_psql('postgres', "ALTER DATABASE postgres SET $setting = '$value'");
	$node->restart;
	$log_offset = -s $node->logfile;
	is($node->safe_psql('postgres', "SHOW $shown"), $value,
		"the database's sessions run with $shown $value");
	add_rows($b);
	fires('fresh', $b, "the worker steps a pipeline of a database whose $setting is $value");
	is( $node->safe_psql(
			'postgres', qq{
		SELECT n FROM audit
		WHERE window_start = '2026-01-01 00:00+00'::timestamptz + interval '2 minutes' * $b}),
		'60', 'and the result table\'s trigger wrote in its step');
	$log = slurp_file($node->logfile, $log_offset);
	unlike($log, qr/cannot run in a REPEATABLE READ|read-only transaction/,
		'no step of the worker was refused');
	unlike($log, qr/exited with exit code 1/, 'the worker never exited on an error');
	my ($ret, $out, $err) = $node->psql('postgres', q{SELECT windowing.process('fresh')});
	like($err, $refusal, 'process() in its sessions is still refused');
	$node->safe_psql('postgres',
		"SET default_transaction_read_only = off; ALTER DATABASE postgres RESET $setting");
}

# A lock_timeout of the database's does not cut short a round's wait for
# the pipeline catalog's lock (held here for a second, while rounds come
# every 20 ms): the worker waits, and steps once the lock is free, instead
# of exiting on the error.
$b++;
$node->safe_psql('postgres', "ALTER DATABASE postgres SET lock_timeout = '10ms'");
$node->restart;
$log_offset = -s $node->logfile;
$holder = $node->background_psql('postgres');
$holder->query_safe(
	'SET client_min_messages = warning; BEGIN; LOCK TABLE windowing.pipeline IN ACCESS EXCLUSIVE MODE');
$holder->query_safe('SELECT pg_sleep(1)');
$holder->query_safe('COMMIT');
$holder->quit;
add_rows($b);
fires('fresh', $b, "the worker steps a pipeline of a database whose lock_timeout is short");
$log = slurp_file($node->logfile, $log_offset);
unlike($log, qr/lock timeout/, 'no wait of the worker timed out');
unlike($log, qr/exited with exit code 1/, 'the worker never exited on an error');
$node->safe_psql('postgres', 'ALTER DATABASE postgres RESET lock_timeout');

$node->stop;
done_testing();
