# A pipeline with on_error 'route', run by the worker: the rows whose
# aggregate input fails go to the late table with their error, the others
# to their windows, and the pipeline never fails; a pipeline with 'stop'
# on the same queue fails on the first of them, as ever, and its failure
# names that row and holds the error as the late row does.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use Windowing qw(worker_node);

my $node = worker_node('on_error', q{
windowing.poll_interval = 20ms
});
$node->safe_psql('postgres', q{
CREATE EXTENSION windowing;
SELECT windowing.create_queue('notes', 'id int, ts bigint, note text', retention => 'keep');
SELECT windowing.create_pipeline('routed', 'notes', 'ts', assigner => windowing.tumbling('1 second'),
    aggregates => 'count(*) AS n, sum(note::int) AS total', on_error => 'route');
SELECT windowing.create_pipeline('stopped', 'notes', 'ts', assigner => windowing.tumbling('1 second'),
    aggregates => 'count(*) AS n, sum(note::int) AS total');
});

# three batches of 100 rows a second apart; every tenth row of the first
# two batches cannot be cast
for my $b (0 .. 2)
{
	$node->safe_psql('postgres', qq{
INSERT INTO notes SELECT i, $b * 1000 + i,
    CASE WHEN $b < 2 AND i % 10 = 0 THEN 'n/a' ELSE '1' END
FROM generate_series(1, 100) i});
}

ok($node->poll_query_until('postgres',
		q{SELECT rows_consumed = 300 FROM windowing.pipeline_stats WHERE name = 'routed'}),
	'the routing pipeline consumes every row');
is($node->safe_psql('postgres', q{SELECT window_start, n, total FROM routed_results ORDER BY 1}),
	"0|90|90\n1000|90|90", 'the windows count the rows that did not fail');
is($node->safe_psql('postgres', q{
SELECT count(*), count(DISTINCT row_data->>'ts'), min(reason), max(error->>'sqlstate')
FROM routed_late}),
	'20|20|error: 22P02: invalid input syntax for type integer: "n/a"|22P02',
	'the late table holds each failing row once, with its error');
is($node->safe_psql('postgres', q{
SELECT state, late_routed, failures FROM windowing.pipeline_stats WHERE name = 'routed'}),
	'running|20|0', 'and the pipeline runs on without failures');
ok($node->poll_query_until('postgres',
		q{SELECT state = 'failed' FROM windowing.pipeline_stats WHERE name = 'stopped'}),
	'the stopping pipeline fails');
is($node->safe_psql('postgres', q{
SELECT rows_consumed, last_error, last_error_sqlstate, last_error_detail IS NULL,
       last_error_hint IS NULL, last_error_seq
FROM windowing.pipeline_stats WHERE name = 'stopped'}),
	'0|invalid input syntax for type integer: "n/a"|22P02|t|t|10',
	'on the first failing row, whose arrival number it records');
# the routing pipeline's late row for that row holds the same error
is($node->safe_psql('postgres', q{
SELECT l.error = jsonb_build_object('sqlstate', s.last_error_sqlstate, 'message', s.last_error,
                                    'detail', s.last_error_detail, 'hint', s.last_error_hint)
FROM routed_late l JOIN notes n ON n.id::text = l.row_data->>'id' AND n.ts::text = l.row_data->>'ts'
JOIN windowing.pipeline_stats s ON s.name = 'stopped' AND s.last_error_seq = n.windowing_seq}),
	't', 'as the late row of the routing pipeline records it');

$node->stop;
done_testing();
