# A pipeline of several parts, each stepped by a worker of its own, while a
# producer writes: a worker per part, the results of a single-part twin and
# of a GROUP BY over the rows, a change of parallelism from 1 to 2 to 3 and
# back to 1 mid-run (the parts then stand at different points of the
# queue), and a SIGKILL of a part's worker.  Every wait polls a condition.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use Windowing qw(worker_node differences kill_worker);

my $node = worker_node('parallel', q{
windowing.poll_interval = 20
});
$node->safe_psql('postgres', q{
	CREATE EXTENSION windowing;
	SELECT windowing.create_queue('events', 'k int, ts timestamptz, v int', retention => 'keep');
	SELECT windowing.create_pipeline(name, 'events', 'ts', '{k}', assigner, 'count(*) AS n, sum(v) AS total',
		max_out_of_orderness => '5 seconds', parallelism => p, emit => 'append')
	FROM (VALUES ('tumble_one', windowing.tumbling('1 minute'), 1),
	             ('tumble_par', windowing.tumbling('1 minute'), 1),
	             ('session_one', windowing.session('20 seconds'), 1),
	             ('session_par', windowing.session('20 seconds'), 2)) v(name, assigner, p);
});

my $workers = q{SELECT count(*) FROM pg_stat_activity
	WHERE backend_type = 'windowing worker' AND datname = 'postgres'};

# 200 keys, a row a second of event time per batch of 400; a key's sessions
# close when it skips a batch
my $batch = 0;
sub produce
{
	my $from = 400 * $batch;
	my $skip = $batch++ % 5;
	$node->safe_psql('postgres', qq{
		INSERT INTO events (k, ts, v)
		SELECT g % 200, '2026-01-01 00:00+00'::timestamptz + g * interval '250 milliseconds', g % 7
		FROM generate_series($from + 1, $from + 400) g WHERE g % 200 % 5 <> $skip;
	});
}

sub caught_up
{
	my ($name) = @_;
	return $node->poll_query_until('postgres', qq{
		SELECT bool_and(p.tick_lo IS NOT NULL AND p.tick_hi IS NULL
		                AND windowing._backlog_rows(p.source, p.tick_lo, p.tick_hi, p.last_seq, p.scan_from) = 0)
		FROM windowing.pipeline p WHERE p.name = '$name'});
}

sub same_as_twin
{
	my ($what) = @_;
	produce();
	ok(caught_up($_), "$what: $_ caught up") for qw(tumble_one tumble_par session_one session_par);
	is(differences($node, 'postgres', 'SELECT k, window_start, window_end, n, total FROM tumble_par_results',
			'SELECT k, window_start, window_end, n, total FROM tumble_one_results'),
		'0', "$what: the tumbling windows of the parts are the single part's");
	is(differences($node, 'postgres', 'SELECT k, window_start, window_end, n, total FROM session_par_results',
			'SELECT k, window_start, window_end, n, total FROM session_one_results'),
		'0', "$what: the sessions of the parts are the single part's");
}

produce() for 1 .. 3;
ok($node->poll_query_until('postgres', $workers, '2'),
	'a pipeline of two parts gets a second worker');
is($node->safe_psql('postgres', q{SELECT string_agg(application_name, ', ' ORDER BY application_name)
	FROM pg_stat_activity WHERE backend_type = 'windowing worker'}),
	'windowing worker, windowing worker', 'the workers name themselves');
same_as_twin('two parts');

# from one part to two to three while the producer writes: each change
# finds the parts wherever their workers left them
for my $p (2, 3)
{
	produce();
	$node->safe_psql('postgres', "SELECT windowing.alter_pipeline('tumble_par', parallelism => $p)");
	produce();
	$node->safe_psql('postgres', "SELECT windowing.alter_pipeline('session_par', parallelism => $p)");
}
ok($node->poll_query_until('postgres', $workers, '3'), 'three parts, three workers');
same_as_twin('after going to three parts');

# SIGKILL of the third part's worker: the server restarts every process,
# and nothing is lost or doubled
my $third = $node->safe_psql('postgres', q{SELECT pid FROM pg_stat_activity
	WHERE backend_type = 'windowing worker' AND backend_start = (SELECT max(backend_start)
	FROM pg_stat_activity WHERE backend_type = 'windowing worker')});
produce();
ok(kill_worker($node, $third), 'a part\'s worker is killed');
ok($node->poll_query_until('postgres', $workers, '3'), 'the workers come back');
same_as_twin('after a SIGKILL');

# back to one part: the others' workers leave once they have nothing to step
$node->safe_psql('postgres', q{
	SELECT windowing.alter_pipeline(n, parallelism => 1) FROM unnest(ARRAY['tumble_par', 'session_par']) n});
produce();
ok($node->poll_query_until('postgres', $workers, '1'), 'one part, one worker');
same_as_twin('back to one part');
is($node->safe_psql('postgres', q{SELECT count(*) FROM windowing.pipeline WHERE part > 0}),
	'0', 'no part is left over');

# and all of it is what a GROUP BY over the rows gives, for the windows
# the watermark has closed
is(differences($node, 'postgres', 'SELECT k, window_start, n, total FROM tumble_par_results', q{
	SELECT k, windowing.tumble_start(ts, '1 minute'), count(*), sum(v) FROM events
	GROUP BY 1, 2
	HAVING windowing.tumble_start(ts, '1 minute') + interval '1 minute' + interval '5 seconds'
	       <= (SELECT max(ts) FROM events)}),
	'0', 'the results are the GROUP BY of the rows');

$node->stop;
done_testing();
