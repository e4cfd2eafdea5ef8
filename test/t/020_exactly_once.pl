# Exactly once under faults: the background worker runs three pipelines on
# one queue fed by batches of producer transactions; between batches the
# worker is killed with SIGKILL (wherever it is in its step) and the server
# is stopped with -m immediate once.  The results must equal an offline
# recomputation over the committed rows (tumbling, sliding and merging
# session windows): nothing lost, nothing counted twice, no window fired
# twice, and the queue emptied along the way.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use Windowing qw(worker_node differences wait_for_worker kill_worker_between);
use Time::HiRes qw(time);

my $node = worker_node('faults', q{
windowing.poll_interval = 20ms
windowing.queue_truncate_size = 64kB
});

$node->safe_psql('postgres', q{
CREATE EXTENSION windowing;
CREATE TABLE events (k int, ts bigint, v int);
CREATE TABLE truth (k int, ts bigint, v int);
SELECT windowing.create_pipeline('sums', 'events', 'ts', '{k}',
    windowing.tumbling('100 milliseconds'), 'count(*) AS n, sum(v) AS total',
    max_out_of_orderness => '0', retention => 'consume');
SELECT windowing.create_pipeline('fires', 'events', 'ts', '{k}',
    windowing.hopping('200 milliseconds', '100 milliseconds'), 'count(*) AS n',
    emit => 'append', retention => 'consume');
SELECT windowing.create_pipeline('sess', 'events', 'ts', '{k}',
    windowing.session('8 milliseconds'), 'count(*) AS n, sum(v) AS total', retention => 'consume');
});

# The worker alone, no process() call, produces results soon after rows commit.
wait_for_worker($node);
my $start = time();
$node->safe_psql('postgres', q{
INSERT INTO events VALUES (1, 0, 1), (1, 150, 1);
INSERT INTO truth VALUES (1, 0, 1), (1, 150, 1);
});
ok($node->poll_query_until('postgres', 'SELECT count(*) = 1 FROM sums_results'),
	'the worker fired a window without any process() call');
my $latency = time() - $start;
cmp_ok($latency, '<', 1.0, 'within a second of the commit');
diag(sprintf('first result %.0f ms after the commit', $latency * 1000));

# Producers: batches in their own transactions, time increasing, so that
# no row is late and the recomputation is a plain GROUP BY.
my $ts = 1000;
sub produce
{
	my ($batches) = @_;
	for (1 .. $batches)
	{
		my $rows = join(', ', map { my $t = $ts + $_; "(" . ($_ % 7) . ", $t, $_)" } 1 .. 50);
		$node->safe_psql('postgres',
			"BEGIN; INSERT INTO events VALUES $rows; INSERT INTO truth VALUES $rows; COMMIT;");
		# a pause between batches ends the sessions
		$ts += 50 + ($_ % 2) * 100;
	}
}

my $kills = kill_worker_between($node, 8, sub { produce(10 + int(rand(10))) });
produce(10);
$node->stop('immediate');
$node->start;
produce(10);
ok($kills >= 6, "the worker was killed $kills times while producers inserted");

# Drain: every committed row consumed by every pipeline, then end of input.
my $total = $node->safe_psql('postgres', 'SELECT count(*) FROM truth');
ok($node->poll_query_until('postgres',
		"SELECT bool_and(rows_consumed = $total) FROM windowing.pipeline_stats"),
	"every pipeline consumed all $total rows");
$node->safe_psql('postgres',
	q{SELECT windowing.flush('sums'), windowing.flush('fires'), windowing.flush('sess')});

is(differences($node, 'postgres', 'SELECT k, window_start, n, total FROM sums_results',
		'SELECT k, windowing.tumble_start(ts, 100), count(*), sum(v) FROM truth GROUP BY 1, 2'),
	'0', 'tumbling results equal the offline recomputation');

is($node->safe_psql('postgres', q{
SELECT count(*) FROM (
  SELECT k, window_start, count(*) FROM fires_results GROUP BY 1, 2 HAVING count(*) <> 1) d}),
	'0', 'no window fired twice');
is(differences($node, 'postgres', 'SELECT k, window_start, n FROM fires_results',
		'SELECT t.k, w.window_start, count(*) FROM truth t, windowing.hop(t.ts, 200, 100) w GROUP BY 1, 2'),
	'0', 'sliding results equal the offline recomputation');
is(differences($node, 'postgres', 'SELECT k, window_start, window_end, n, total FROM sess_results', q{
WITH s AS (SELECT k, unnest(windowing.sessions(ts, 8)) AS w FROM truth GROUP BY k)
SELECT s.k, (s.w).window_start, (s.w).window_end, count(*), sum(t.v)
FROM s JOIN truth t ON t.k = s.k AND t.ts >= (s.w).window_start AND t.ts < (s.w).window_end
GROUP BY 1, 2, 3}),
	'0', 'session results equal the offline recomputation');
is($node->safe_psql('postgres', 'SELECT sum(late_routed + late_dropped) FROM windowing.pipeline_stats'),
	'0', 'no row was late');

# Consumed queue storage was reclaimed in bulk while the pipelines ran.
cmp_ok($node->safe_psql('postgres', 'SELECT count(*) FROM events'), '<', $total,
	'the queue was truncated along the way');

$node->stop;
done_testing();
