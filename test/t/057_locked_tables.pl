# A pipeline whose table another session has locked is left for a later
# round: the worker does not wait for the lock, so its other pipelines go
# on, and a session that then locks another pipeline's table does not
# deadlock with it.  A join's right queue and state tables count as its
# tables, and a session that holds the pipeline itself (process() in a
# transaction still open) holds it back alike.  Every wait polls a
# condition.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use Windowing qw(worker_node);

# a round's steps share one transaction for up to a second
my $node = worker_node('locked', q{
windowing.poll_interval = 50
windowing.worker_batch_time = 1000
deadlock_timeout = 100ms
});
$node->safe_psql('postgres', q{
CREATE EXTENSION windowing;
CREATE TABLE q (k int, ts timestamptz);
SELECT windowing.create_pipeline('a_free', 'q', 'ts', '{k}', windowing.tumbling('1 minute'),
                                 'count(*) AS n', retention => 'consume');
SELECT windowing.create_pipeline('b_locked', 'q', 'ts', '{k}', windowing.tumbling('1 minute'),
                                 'count(*) AS n', retention => 'consume');
SELECT windowing.create_queue('rq', 'k int, ts timestamptz');
SELECT windowing.create_join_pipeline('b_join', 'q', 'ts', '{k}', 'rq', 'ts', '{k}',
                                      'q.k, q.ts AS left_at, rq.ts AS right_at',
                                      lower => '0', upper => '1 minute');
});

# rows 10 s apart: "batch" 0 fills minutes 0 to 9, 1 the next ten
sub add_rows
{
	my ($batch) = @_;
	my $from = 60 * $batch;
	$node->safe_psql('postgres', qq{
		INSERT INTO q SELECT g % 3, '2026-01-01 00:00+00'::timestamptz + g * interval '10 seconds'
		FROM generate_series($from + 1, $from + 60) g});
}
my $counted = q{SELECT coalesce(sum(n), 0) FROM %s_results};

# The worker steps a_free, then b_locked, in one transaction of its round.
# Waiting for b_locked's result table would have held a_free's results
# back, uncommitted, until the lock went.
my $holder = $node->background_psql('postgres');
my $log_offset = -s $node->logfile;
$holder->query_safe(q{BEGIN; LOCK TABLE b_locked_results IN ACCESS EXCLUSIVE MODE});
add_rows(0);
ok($node->poll_query_until('postgres', sprintf($counted, 'a_free'), '59'),
	'a pipeline fires while another pipeline of its queue has its result table locked');
is($node->safe_psql('postgres', q{SELECT rows_consumed FROM windowing.pipeline WHERE name = 'b_locked'}),
	'0', 'the locked one is left as it was');
# no longer a worker waiting in pg_stat_activity: the log says it, once
$node->wait_for_log(qr/pipeline "b_locked" waits for a lock on table "b_locked_results"/, $log_offset);
pass('the log says which lock holds the pipeline back');

# The holder now locks a_free's table, which the worker's round also
# writes.  Had the worker waited for b_locked's, each would wait for the
# other, and one would be cancelled as a deadlock.
$holder->query_safe(q{SET lock_timeout = '60s'; LOCK TABLE a_free_results IN ACCESS EXCLUSIVE MODE});
add_rows(1);
$holder->query_safe('COMMIT');
$holder->quit;
ok($node->poll_query_until('postgres', sprintf($counted, 'a_free'), '119'), 'once committed, a_free goes on');
ok($node->poll_query_until('postgres', sprintf($counted, 'b_locked'), '119'), 'and b_locked catches up');
my @held = (slurp_file($node->logfile, $log_offset) =~ /pipeline "b_locked" waits for a lock/g);
is(scalar(@held), 1, 'once for as long as it is held back');

# A join's step also reads its right queue and opens its state tables (a
# window join's deletes from them): with one of them locked, the join is
# left for a later round, and the round's other steps commit.
my $join_read = q{SELECT string_agg(i.side || ' ' || i.rows_consumed, ', ' ORDER BY i.side)
	FROM windowing.join_input i JOIN windowing.pipeline p ON p.id = i.pipeline_id WHERE p.name = 'b_join'};
ok($node->poll_query_until('postgres', $join_read, 'left 120, right 0'), 'the join read the left queue');
sub join_held_by
{
	my ($table, $batch) = @_;
	my $read = 60 * ($batch + 1);
	$holder = $node->background_psql('postgres');
	$log_offset = -s $node->logfile;
	$holder->query_safe(qq{BEGIN; LOCK TABLE $table IN ACCESS EXCLUSIVE MODE});
	add_rows($batch);
	ok($node->poll_query_until('postgres', sprintf($counted, 'a_free'), $read - 1),
		"a pipeline fires while a join of its queue has $table locked");
	is($node->safe_psql('postgres', $join_read), 'left ' . ($read - 60) . ', right 0',
		'the join is left as it was');
	$node->wait_for_log(qr/pipeline "b_join" waits for a lock on table "$table"/, $log_offset);
	pass("the log names $table");
	$holder->query_safe('COMMIT');
	$holder->quit;
	ok($node->poll_query_until('postgres', $join_read, "left $read, right 0"),
		'once committed, the join goes on');
}
join_held_by('rq', 2);
join_held_by('b_join_left_state', 3);

# A session that steps b_locked in a transaction it keeps open holds the
# pipeline: the worker steps the others meanwhile, round after round.
$holder = $node->background_psql('postgres');
$log_offset = -s $node->logfile;
$holder->query_safe(q{BEGIN; SELECT windowing.process('b_locked')});
add_rows(4);
ok($node->poll_query_until('postgres', sprintf($counted, 'a_free'), '299'),
	'a pipeline fires while a session holds another of its queue');
add_rows(5);
ok($node->poll_query_until('postgres', sprintf($counted, 'a_free'), '359'), 'and again at the next rows');
is($node->safe_psql('postgres', sprintf($counted, 'b_locked')), '239', 'the held one is left as it was');
$node->wait_for_log(qr/pipeline "b_locked" waits for another session that holds it/, $log_offset);
pass('the log says a session holds the pipeline');
$holder->query_safe('COMMIT');
$holder->quit;
ok($node->poll_query_until('postgres', sprintf($counted, 'b_locked'), '359'), 'once it commits, b_locked catches up');
is($node->safe_psql('postgres', q{SELECT string_agg(name || ': ' || failures || ' ' || coalesce(last_error, ''), ', '
	ORDER BY name) FROM windowing.pipeline}),
	'a_free: 0 , b_join: 0 , b_locked: 0 ', 'no step failed');

$node->stop;
done_testing();
