# The helper process that reads a big tick for a step (queue_helper.c), on
# a server without the library preloaded: it reads what the step would
# read itself; without a free worker slot the step reads for itself; and if
# the helper is killed in the middle of a tick, the step fails and rolls
# back, and the next step consumes the tick from where the last committed
# step left it, each row counted once.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use Windowing qw(differences);

my $node = PostgreSQL::Test::Cluster->new('helper');
$node->init;
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION windowing;
CREATE TABLE events (k int, ts bigint, v int, note text);
SELECT windowing.create_pipeline(p, 'events', 'ts', '{k}', windowing.tumbling('100 milliseconds'),
    'count(*) AS n, sum(v) AS total, max(note) AS note', max_out_of_orderness => '5 milliseconds',
    start => false, retention => 'consume')
FROM unnest(ARRAY['self', 'helped', 'no_slot']) p;
SELECT windowing.create_pipeline('helped_rows', 'events', 'ts', '{k}',
    windowing.tumbling('100 milliseconds'),
    'count(*) AS n, sum(v) AS total, max(note || '''') AS note',
    max_out_of_orderness => '5 milliseconds', start => false, retention => 'consume');
INSERT INTO events (k, ts, v, note)
    SELECT i % 13, i + (i * 7) % 11, i, repeat('z', i % 90) || i FROM generate_series(1, 50000) i;
});

my $fields = 'k, window_start, n, total, note, fire_count';

# Runs a step of $pipeline with the helper on for ticks of at least 1000
# rows: it consumes the tick, says $says (at DEBUG1) and gives the results
# of the step that read for itself.
sub check_helped
{
	my ($pipeline, $says, $what) = @_;
	my ($ret, $out, $err) = $node->psql('postgres', qq{
SET windowing.read_helper_rows = 1000;
SET client_min_messages = debug1;
SELECT windowing.process('$pipeline');
});
	is($out, '50000', "$what: the step consumes the tick");
	like($err, $says, "$what: it says so");
	$node->safe_psql('postgres', "SELECT windowing.flush('$pipeline')");
	is(differences($node, 'postgres', "SELECT $fields FROM ${pipeline}_results",
			"SELECT $fields FROM self_results"), '0',
		"$what: the results of the step reading for itself");
}

$node->safe_psql('postgres', q{SELECT windowing.process('self'), windowing.flush('self')});
check_helped('helped', qr/a helper process reads the columns of the tick of queue "events"/,
	'a helper sending the columns');
# an input that is not a column: the helper sends the rows
check_helped('helped_rows', qr/a helper process reads the rows of the tick of queue "events"/,
	'a helper sending the rows');

# No worker slot: the step reads for itself.
$node->append_conf('postgresql.conf', 'max_worker_processes = 0');
$node->restart;
check_helped('no_slot', qr/no helper process could start to read the tick of queue "events"/,
	'no worker slot');

# A helper killed in the middle of a tick.  The step's inputs sleep a
# little per row, so that the helper, ahead of it, waits on a full queue
# of rows; those rows are wide, so that the step soon finds the helper gone.
$node->append_conf('postgresql.conf', 'max_worker_processes = 8');
$node->restart;
$node->safe_psql('postgres', q{
CREATE TABLE slow (k int, ts bigint, v int, note text);
SELECT windowing.create_pipeline(p, 'slow', 'ts', '{k}', windowing.tumbling('100 milliseconds'),
    'count(*) AS n, ' || total || ' AS total', max_out_of_orderness => '5 milliseconds',
    start => false, retention => 'consume')
FROM (VALUES ('slow_self', 'sum(v)'),
             ('slow_helped', 'sum(v + length(pg_sleep(0.0002)::text))')) p(p, total);
INSERT INTO slow (k, ts, v, note)
    SELECT i % 13, i + (i * 7) % 11, i,
           (SELECT string_agg(md5(i::text || j), '') FROM generate_series(1, 50) j)
    FROM generate_series(1, 5000) i;
});
my $step = $node->background_psql('postgres', on_error_stop => 0);
$step->query_until(qr/started/, q{
SET windowing.read_helper_rows = 1000;
\echo started
SELECT windowing.process('slow_helped');
});
$node->poll_query_until('postgres', q{
SELECT pg_terminate_backend(pid) FROM pg_stat_activity
WHERE backend_type = 'windowing queue helper'}) or die 'no helper to kill';
$step->query(q{SELECT 'after the step'});
$step->quit;
like($step->{stderr}, qr/queue helper process stopped before the end of the tick/,
	'the step fails when its helper stops');
is($node->safe_psql('postgres', q{SELECT rows_consumed FROM windowing.pipeline_stats WHERE name = 'slow_helped'}),
	'0', 'and consumes nothing');
$node->safe_psql('postgres', q{
SELECT windowing.process(p), windowing.flush(p) FROM unnest(ARRAY['slow_self', 'slow_helped']) p});
is(differences($node, 'postgres', 'SELECT k, window_start, n, total FROM slow_helped_results',
		'SELECT k, window_start, n, total FROM slow_self_results'), '0',
	'a later step gives the results of one that read for itself');
is($node->safe_psql('postgres', q{
SELECT (SELECT sum(n) FROM slow_helped_results) + (SELECT count(*) FROM slow_helped_late)}),
	'5000', 'each row counted once, in a window or late');

$node->stop;
done_testing();
