# A rebuild replayed by the background worker, killed with SIGKILL again
# and again while it replays and while producers insert: each replay step
# commits its position with its results, so the rebuilt results must equal
# a recomputation over the committed rows, with no row late, none lost or
# counted twice, and the live rows after the replay read once.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use Windowing qw(worker_node differences worker_pid kill_worker);

my $node = worker_node('rebuild', q{
windowing.poll_interval = 20ms
windowing.worker_step_time = 20ms
});

# History out of order by up to 20 s, read live first: most of it is late.
$node->safe_psql('postgres', q{
CREATE EXTENSION windowing;
SELECT windowing.create_queue('events', 'k int, ts bigint, v int', retention => 'keep');
INSERT INTO events SELECT i % 50, (i * 7919) % 200000, i FROM generate_series(1, 200000) i;
SELECT windowing.create_pipeline('sums', 'events', 'ts', '{k}',
    windowing.tumbling('1 second'), 'count(*) AS n, sum(v) AS total',
    max_out_of_orderness => '10 milliseconds');
});
ok($node->poll_query_until('postgres',
		q{SELECT rows_consumed = 200000 FROM windowing.pipeline_stats WHERE name = 'sums'}),
	'the worker read the history live');
cmp_ok($node->safe_psql('postgres', 'SELECT count(*) FROM sums_late'), '>', 100000,
	'read live, most of the history is late');

# Rebuilt by the worker, which is killed while it replays; live rows, newer
# than the history, come in meanwhile.
is($node->safe_psql('postgres', q{SELECT windowing.rebuild('sums')}), '200000',
	'the rebuild replays the committed rows');
my ($kills, $seen_progress, $ts) = (0, 0, 300000);
for my $round (1 .. 12)
{
	$node->safe_psql('postgres',
		"INSERT INTO events SELECT i % 50, $ts + i, 1 FROM generate_series(1, 500) i");
	$ts += 1000;
	my $done = $node->safe_psql('postgres',
		q{SELECT rows_done FROM windowing.rebuild_progress WHERE name = 'sums'});
	$seen_progress++ if $done ne '' && $done > 0 && $done < 200000;
	my $pid = worker_pid($node);
	$kills += kill_worker($node, $pid) if $pid;
}
ok($kills >= 6, "the worker was killed $kills times");
ok($seen_progress > 0, 'rebuild_progress showed the replay part done');

ok($node->poll_query_until('postgres',
		q{SELECT NOT EXISTS (SELECT FROM windowing.rebuild_progress)
		  AND (SELECT rows_consumed FROM windowing.pipeline_stats WHERE name = 'sums')
		      = (SELECT count(*) FROM events)}),
	'the replay ended and the live rows were read');
$node->safe_psql('postgres', q{SELECT windowing.flush('sums')});

is($node->safe_psql('postgres', 'SELECT count(*) FROM sums_late'), '0', 'no row was late');
is(differences($node, 'postgres', 'SELECT k, window_start, n, total, fire_count FROM sums_results',
		'SELECT k, windowing.tumble_start(ts, 1000), count(*), sum(v), 1 FROM events GROUP BY 1, 2'),
	'0', 'the rebuilt results equal the recomputation, each window fired once');

$node->stop;
done_testing();
