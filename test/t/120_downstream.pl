# A pipeline of pipelines under faults: "minutes" reads the producers'
# queue, "hours" reads the minutes' results and takes their watermark
# (watermark_from).  The worker is killed with SIGKILL between batches of
# producer transactions and the server stopped with -m immediate once.
# An hour fires only when all of its minutes are in: had the hours'
# watermark run ahead of the minutes they read, later minutes would come
# late and the sums would differ from the offline recomputation.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use Windowing qw(worker_node differences kill_worker_between);

my $node = worker_node('downstream', q{
windowing.poll_interval = 20ms
});

$node->safe_psql('postgres', q{
CREATE EXTENSION windowing;
CREATE TABLE events (k int, ts bigint, v int);
CREATE TABLE truth (k int, ts bigint, v int);
SELECT windowing.create_pipeline('minutes', 'events', 'ts', '{k}',
    windowing.tumbling('10 milliseconds'), 'count(*) AS n, sum(v) AS total',
    max_out_of_orderness => '5 milliseconds', emit => 'append', retention => 'consume');
SELECT windowing.create_pipeline('hours', 'minutes_results', 'window_time', '{k}',
    windowing.tumbling('100 milliseconds'), 'sum(n) AS n, sum(total) AS total, count(*) AS minutes',
    emit => 'append', retention => 'consume', watermark_from => 'minutes');
});

# Producers: batches in their own transactions, out of order within the
# minutes' out-of-orderness, so that no row is late for them.
my $ts = 0;
sub produce
{
	my ($batches) = @_;
	for (1 .. $batches)
	{
		my $rows = join(', ',
			map { my $t = $ts + $_ - ($_ % 3); "(" . ($_ % 5) . ", $t, $_)" } 1 .. 40);
		$node->safe_psql('postgres',
			"BEGIN; INSERT INTO events VALUES $rows; INSERT INTO truth VALUES $rows; COMMIT;");
		$ts += 40;
	}
}

my $kills = kill_worker_between($node, 8, sub { produce(5 + int(rand(10))) });
produce(5);
$node->stop('immediate');
$node->start;
produce(5);
ok($kills >= 6, "the worker was killed $kills times while producers inserted");

# Drain the minutes, end their input; the hours take that watermark too.
my $total = $node->safe_psql('postgres', 'SELECT count(*) FROM truth');
ok($node->poll_query_until('postgres',
		"SELECT rows_consumed = $total FROM windowing.pipeline_stats WHERE name = 'minutes'"),
	"the minutes consumed all $total rows");
$node->safe_psql('postgres', q{SELECT windowing.flush('minutes')});
ok($node->poll_query_until('postgres', q{
SELECT (SELECT rows_consumed FROM windowing.pipeline_stats WHERE name = 'hours') =
       (SELECT count(*) FROM (SELECT DISTINCT k, ts / 10 FROM truth) m)
   AND (SELECT count(*) FROM hours_results) =
       (SELECT count(*) FROM (SELECT DISTINCT k, ts / 100 FROM truth) h)}),
	'the hours read every minute and fired every hour');

is(differences($node, 'postgres', 'SELECT k, window_start, n, total FROM minutes_results',
		'SELECT k, windowing.tumble_start(ts, 10), count(*), sum(v) FROM truth GROUP BY 1, 2'),
	'0', 'minutes equal the offline recomputation');
is(differences($node, 'postgres', 'SELECT k, window_start, n, total, minutes FROM hours_results', q{
SELECT k, windowing.tumble_start(ts, 100), count(*), sum(v), count(DISTINCT ts / 10)
FROM truth GROUP BY 1, 2}),
	'0', 'hours equal the offline recomputation, each fired once with all of its minutes');
is($node->safe_psql('postgres', 'SELECT sum(late_routed + late_dropped) FROM windowing.pipeline_stats'),
	'0', 'no row was late for either pipeline');

$node->stop;
done_testing();
