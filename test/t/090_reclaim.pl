# The worker empties a consumed queue (TRUNCATE) once it passes
# windowing.queue_truncate_size.  Its steps stop at 100,000 rows, leaving a
# big tick open, and producers keep committing meanwhile: the reclaim must
# still consume every committed row before it truncates, without an error,
# so that nothing is lost, nothing counted twice, and the worker keeps
# running.  A queue whose rows are kept is never emptied.  A producer that
# holds the queue keeps the worker out of line until the queue is twice
# the size.  A session that locks a pipeline's result table holds the
# reclaim back, never the queue's producers, and one that holds a pipeline
# holds the reclaim back, never the worker.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FindBin;
use lib $FindBin::RealBin;
use Windowing qw(worker_node);

my $node = worker_node('reclaim', q{
windowing.poll_interval = 20ms
windowing.queue_truncate_size = 1MB
});

$node->safe_psql('postgres', q{
CREATE EXTENSION windowing;
CREATE TABLE q (k int, ts timestamptz, v int);
SELECT windowing.create_pipeline('t', 'q', 'ts', '{k}', windowing.tumbling('1 day'),
                                 'count(*) AS n, sum(v) AS s', retention => 'consume');});

# A trickle of one committed row every 10 ms, then a batch of 300,000 rows
# while it runs; all in one day's windows, so that no row is late.
my ($out, $err) = ('', '');
my $trickle = IPC::Run::start(
	[
		'psql', '-X', '-q', '-d', $node->connstr('postgres'), '-c', q{
DO $$ BEGIN
    FOR i IN 1..400 LOOP
        INSERT INTO q VALUES (1, '2026-01-01 01:00', 1);
        COMMIT;
        PERFORM pg_sleep(0.01);
    END LOOP;
END $$}
	],
	'>', \$out, '2>', \$err);
$node->safe_psql('postgres', q{
INSERT INTO q SELECT g % 10, '2026-01-01'::timestamptz + g * interval '1 ms', 1
FROM generate_series(1, 300000) g});
$trickle->finish;
is($err, '', 'the producers ran without errors');

ok( $node->poll_query_until(
		'postgres', q{SELECT rows_consumed = 300400 FROM windowing.pipeline WHERE name = 't'}),
	'every committed row is consumed');
is( $node->safe_psql(
		'postgres', q{SELECT failures, last_error IS NULL FROM windowing.pipeline WHERE name = 't'}),
	'0|t',
	'no step failed');
$node->safe_psql('postgres', q{SELECT windowing.pause_pipeline('t'); SELECT windowing.flush('t')});
is($node->safe_psql('postgres', 'SELECT sum(n), sum(s) FROM t_results'),
	'300400|300400', 'each row counted once');
cmp_ok($node->safe_psql('postgres', 'SELECT count(*) FROM q'),
	'<', 300400, 'the queue was emptied meanwhile');

# A kept queue is never emptied, however big: the worker passes it by.
$node->safe_psql('postgres', q{
CREATE TABLE kq (k int, ts timestamptz, v int);
SELECT windowing.create_pipeline('kt', 'kq', 'ts', '{k}', windowing.tumbling('1 day'),
                                 retention => 'keep');
INSERT INTO kq SELECT g % 10, '2026-01-01'::timestamptz + g * interval '1 ms', 1
FROM generate_series(1, 50000) g;});
ok( $node->poll_query_until(
		'postgres', q{SELECT rows_consumed = 50000 FROM windowing.pipeline WHERE name = 'kt'}),
	'the kept queue is consumed');
cmp_ok($node->safe_psql('postgres', q{SELECT pg_relation_size('kq')}),
	'>', 1024 * 1024, 'past windowing.queue_truncate_size');
# one more round of the worker, which would empty a consumed queue now
$node->safe_psql('postgres', q{INSERT INTO kq VALUES (1, '2026-01-01 02:00', 1)});
ok( $node->poll_query_until(
		'postgres', q{SELECT rows_consumed = 50001 FROM windowing.pipeline WHERE name = 'kt'}),
	'and its next rows too');
is($node->safe_psql('postgres', 'SELECT count(*) FROM kq'), '50001', 'but never emptied');

# A producer in the middle of a transaction holds the queue: a lock
# request that waited would make every later producer wait behind it.
# Below twice windowing.queue_truncate_size the worker only takes the lock
# when no producer holds it; past that, it waits in line (at most
# windowing.queue_lock_timeout each round).
$node->safe_psql('postgres', q{
CREATE TABLE hq (k int, ts timestamptz, v int);
SELECT windowing.create_pipeline('ht', 'hq', 'ts', '{k}', windowing.tumbling('1 day'),
                                 'count(*) AS n', retention => 'consume');});
my $holder = $node->background_psql('postgres');
$holder->query_safe(q{BEGIN; INSERT INTO hq VALUES (1, '2026-01-01 03:00', 1)});
my $fill = q{INSERT INTO hq SELECT g % 10, '2026-01-01'::timestamptz + g * interval '1 ms', 1
FROM generate_series(1, 22000) g};
# 300 looks at the queue's locks, 10 ms apart: how many saw its ACCESS
# EXCLUSIVE lock asked for
my $watch = q{
CREATE TEMP TABLE seen (n int);
DO $$ BEGIN
    FOR i IN 1..300 LOOP
        INSERT INTO seen SELECT count(*) FROM pg_locks
        WHERE relation = 'hq'::regclass AND mode = 'AccessExclusiveLock';
        PERFORM pg_sleep(0.01);
    END LOOP;
END $$;
SELECT sum(n) FROM seen};
$node->safe_psql('postgres', $fill);
ok( $node->poll_query_until(
		'postgres', q{SELECT rows_consumed = 22000 FROM windowing.pipeline WHERE name = 'ht'}),
	'the held queue is consumed');
is($node->safe_psql('postgres', q{SELECT pg_relation_size('hq') BETWEEN 1024 * 1024 AND 2 * 1024 * 1024}),
	't', 'past windowing.queue_truncate_size, below twice it');
is($node->safe_psql('postgres', $watch), '0', 'the worker does not wait in line for its lock');
$node->safe_psql('postgres', $fill);
ok( $node->poll_query_until(
		'postgres', q{SELECT rows_consumed = 44000 FROM windowing.pipeline WHERE name = 'ht'}),
	'and its next rows');
cmp_ok($node->safe_psql('postgres', $watch), '>', 0, 'past twice the size, it does');
$holder->query_safe('COMMIT');
$holder->quit;
ok( $node->poll_query_until(
		'postgres', q{SELECT rows_consumed = 44001 FROM windowing.pipeline WHERE name = 'ht'})
	  && $node->poll_query_until('postgres', q{SELECT pg_relation_size('hq') = 0}),
	'once the producer commits, its row is read and the queue emptied');
$node->safe_psql('postgres', q{SELECT windowing.pause_pipeline('ht'); SELECT windowing.flush('ht')});
is($node->safe_psql('postgres', 'SELECT sum(n) FROM ht_results'), '44001', 'each row counted once');

# A pipeline of the queue has its result table locked by another session:
# its step, which fires windows, would wait for that lock, and a reclaim
# stepping it with the queue locked would hold up every producer of the
# queue meanwhile.  The worker empties the queue once the lock is gone.

# A queue "l" + "q" read by pipelines "l" + "a" and "l" + "b", which fire
# 1-second windows, filled past windowing.queue_truncate_size while a
# session runs "hold" in a transaction it keeps open, until "l" + "a" has
# consumed it.  Returns the session.
sub held_queue
{
	my ($l, $hold) = @_;
	my $h = $node->background_psql('postgres');

	$node->safe_psql('postgres', qq{CREATE TABLE ${l}q (k int, ts timestamptz, v int)});
	$node->safe_psql('postgres', qq{
		SELECT windowing.create_pipeline('$l$_', '${l}q', 'ts', '{k}', windowing.tumbling('1 second'),
		                                 'count(*) AS n', retention => 'consume')}) for ('a', 'b');
	$h->query_safe("BEGIN; $hold");
	(my $filled = $fill) =~ s/hq/${l}q/;
	$node->safe_psql('postgres', $filled);
	ok( $node->poll_query_until(
			'postgres', qq{SELECT rows_consumed = 22000 FROM windowing.pipeline WHERE name = '${l}a'}),
		'the free pipeline consumes the queue');
	return $h;
}

# The session of held_queue("l") commits: both pipelines read all "rows"
# of the queue, and it is emptied.
sub released_queue
{
	my ($h, $l, $rows, $what) = @_;

	$h->query_safe('COMMIT');
	$h->quit;
	ok( $node->poll_query_until(
			'postgres', qq{SELECT bool_and(rows_consumed = $rows) FROM windowing.pipeline
			               WHERE name IN ('${l}a', '${l}b')})
		  && $node->poll_query_until('postgres', qq{SELECT pg_relation_size('${l}q') = 0}),
		$what);
}
$holder = held_queue('l', 'LOCK TABLE lb_results IN SHARE MODE');
(my $lwatch = $watch) =~ s/'hq'/'lq'/;
is($node->safe_psql('postgres', $lwatch), '0',
	'the worker does not lock the queue while a pipeline of it has a table locked');
is( $node->safe_psql(
		'postgres', q{SET statement_timeout = '10s'; INSERT INTO lq VALUES (1, '2026-01-01 04:00', 1);
		SELECT count(*) FROM lq}),
	'22001', 'producers go on, and the queue keeps its rows');
released_queue($holder, 'l', 22001, 'once the lock is gone, both pipelines read the queue and it is emptied');
$node->safe_psql('postgres', q{SELECT windowing.pause_pipeline('la'); SELECT windowing.flush('la');
	SELECT windowing.pause_pipeline('lb'); SELECT windowing.flush('lb')});
is($node->safe_psql('postgres', 'SELECT (SELECT sum(n) FROM la_results), (SELECT sum(n) FROM lb_results)'),
	'22001|22001', 'each row counted once by each');

# A session that keeps one pipeline of the queue in a transaction still
# open holds the reclaim back, not the worker: the queue's other pipeline
# reads on, and the queue is emptied once the session commits.
$holder = held_queue('m', q{SELECT windowing.process('mb')});
# past a second apart: the worker tries to empty the queue between them
for my $n (22001 .. 22003)
{
	$node->safe_psql('postgres', q{SELECT pg_sleep(1.1); INSERT INTO mq VALUES (1, '2026-01-01 05:00', 1)});
	ok( $node->poll_query_until(
			'postgres', qq{SELECT rows_consumed = $n FROM windowing.pipeline WHERE name = 'ma'}),
		"and reads on: $n rows");
}
released_queue($holder, 'm', 22003, 'once the session commits, both pipelines read the queue and it is emptied');

my $log = slurp_file($node->logfile);
unlike($log, qr/still has rows to consume/, 'reclaim never found rows left behind');
unlike($log, qr/exited with exit code 1/, 'the worker never exited on an error');

$node->stop;
done_testing();
