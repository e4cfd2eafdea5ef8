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
use Windowing qw(worker_node wait_for_worker kill_worker_between fault_pipelines fault_results_exact);
use Time::HiRes qw(time);

my $node = worker_node('faults', q{
windowing.poll_interval = 20ms
windowing.queue_truncate_size = 64kB
});

my %ms = (tumble => 100, hop => [200, 100], gap => 8);
fault_pipelines($node, %ms);

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
fault_results_exact($node, %ms);

# Consumed queue storage was reclaimed in bulk while the pipelines ran.
cmp_ok($node->safe_psql('postgres', 'SELECT count(*) FROM events'), '<', $total,
	'the queue was truncated along the way');

$node->stop;
done_testing();
