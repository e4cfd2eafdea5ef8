# Exactly once under faults, with state that does not fit in memory: as in
# 020_exactly_once, the worker is killed with SIGKILL between batches of
# producer transactions and the server stopped with -m immediate once, but
# windowing.state_memory holds a fraction of the pipelines' open windows,
# so that steps fold their changes into window_state and shed keys to the
# heap, and read them back: the kills land while a step
# writes, evicts or publishes that state.  The results must equal an
# offline recomputation over the committed rows (tumbling, sliding and
# merging session windows).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use Windowing qw(worker_node wait_for_worker kill_worker_between fault_pipelines fault_results_exact);

my $node = worker_node('spilled_faults', q{
windowing.poll_interval = 20ms
windowing.queue_truncate_size = 64kB
windowing.state_memory = 192kB
});

my %ms = (tumble => 5000, hop => [2000, 1000], gap => 300);
fault_pipelines($node, %ms);
wait_for_worker($node);

# Batches of 100 rows over 1,500 keys, time increasing, so that no row is
# late; a key's rows come back often enough for its sessions to merge.
my $ts = 1000;
my $batch = 0;
sub produce
{
	my ($batches) = @_;
	for (1 .. $batches)
	{
		$batch++;
		my $rows = join(', ',
			map { my $t = $ts + $_; "(" . (($_ * 37 + $batch * 11) % 1500) . ", $t, $_)" } 1 .. 100);
		$node->safe_psql('postgres',
			"BEGIN; INSERT INTO events VALUES $rows; INSERT INTO truth VALUES $rows; COMMIT;");
		$ts += 100 + ($batch % 3) * 50;
	}
}

my $kills = kill_worker_between($node, 10, sub { produce(12) });
produce(8);
$node->stop('immediate');
$node->start;
produce(8);
ok($kills >= 8, "the worker was killed $kills times while producers inserted");

my $total = $node->safe_psql('postgres', 'SELECT count(*) FROM truth');
ok($node->poll_query_until('postgres',
		"SELECT bool_and(rows_consumed = $total) FROM windowing.pipeline_stats"),
	"every pipeline consumed all $total rows");

# The budget held: the worker's stores took at most windowing.state_memory,
# and most of the pipelines' open windows were on the heap only.
my ($open, $memory, $bytes) = split /\|/, $node->safe_psql('postgres', q{
SELECT sum(open_windows), sum(memory_windows), sum(state_memory_bytes) FROM windowing.pipeline_stats});
diag("$open open windows, $memory of them in memory ($bytes bytes)");
ok($bytes <= 192 * 1024 && $memory < $open / 2,
	'the open windows did not fit in windowing.state_memory, and the budget held');

fault_results_exact($node, %ms);

$node->stop;
done_testing();
