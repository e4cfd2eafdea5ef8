# The worker's memory does not grow with the rows it consumes: one worker
# consumes a million rows, 100,000 at a time, through a tumbling pipeline
# whose windows keep firing.  After each batch the test reads the total of
# the worker's memory contexts (pg_log_backend_memory_contexts; the least
# of three readings, since one taken during a round also counts what the
# round holds) and its private memory (RssAnon of /proc, which leaves out
# shared buffers and the shared state store).  From the second batch
# (caches warm) to the tenth the contexts must not grow by what a leak of
# 8 bytes a row would add.  RssAnon and the peak VmHWM are reported, not
# asserted: a step's memory is freed when it ends, but the C library keeps
# some of it mapped for reuse, so RssAnon steps up once to a level that
# depends on where the largest steps' memory landed, then stays.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use List::Util qw(min);
use FindBin;
use lib $FindBin::RealBin;
use Windowing qw(worker_node);

my $batch = 100_000;
my $batches = 10;

my $node = worker_node('memory', q{
windowing.poll_interval = 20ms
log_statement = none
});
$node->safe_psql('postgres', q{
CREATE EXTENSION windowing;
CREATE TABLE events (k int, ts bigint, v numeric);
SELECT windowing.create_pipeline('sums', 'events', 'ts', '{k}',
    windowing.tumbling('1 second'), 'count(*) AS n, sum(v) AS total, avg(v), max(v)',
    max_out_of_orderness => '100 milliseconds', retention => 'consume');
});

my $worker = q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'windowing worker'};
$node->poll_query_until('postgres', "SELECT count(*) = 1 FROM ($worker) w") or die 'no worker';
my $pid = $node->safe_psql('postgres', $worker);

sub status_kb
{
	my ($field) = @_;
	my ($line) = grep { /^$field:/ } split /\n/, slurp_file("/proc/$pid/status");
	return ($line =~ /(\d+)/)[0];
}

# The grand total of the worker's memory contexts, from the server log.
sub contexts_bytes
{
	my $offset = -s $node->logfile;
	$node->safe_psql('postgres', "SELECT pg_log_backend_memory_contexts($pid)");
	$node->wait_for_log(qr/\[$pid\].*LOG:  Grand total: \d+ bytes/, $offset);
	my $log = slurp_file($node->logfile, $offset);
	return ($log =~ /\[$pid\].*LOG:  Grand total: (\d+) bytes/)[0];
}

# Keys and times cycle so that windows fire and close all along.
my (@rss, @peak, @ctx);
for my $b (1 .. $batches)
{
	my $from = ($b - 1) * $batch;
	$node->safe_psql('postgres', qq{
INSERT INTO events SELECT i % 1000, i, (i % 97) / 7.0 FROM generate_series($from + 1, $from + $batch) i});
	$node->poll_query_until('postgres',
		"SELECT rows_consumed = $from + $batch FROM windowing.pipeline_stats")
	  or die "batch $b not consumed";
	push @rss, status_kb('RssAnon');
	push @peak, status_kb('VmHWM');
	push @ctx, min(map { contexts_bytes() } 1 .. 3);
}
is($node->safe_psql('postgres', $worker), $pid, 'one worker consumed every batch');
diag('worker memory contexts, bytes, after each 100,000 rows: ' . join(' ', @ctx));
diag('worker RssAnon kB: ' . join(' ', @rss));
diag('worker VmHWM kB (peak, shared memory included): ' . join(' ', @peak));
cmp_ok($ctx[-1] - $ctx[1], '<', 8 * $batch * ($batches - 2),
	"memory contexts from 200,000 to 1,000,000 rows: $ctx[1], then $ctx[-1] bytes");

$node->stop;
done_testing();
