# One busy pipeline does not stall the others of its database: the worker
# ends a step after windowing.worker_step_time, so a pipeline with a long
# backlog of slow rows takes turns with a small one, whose results keep
# coming within about one step's time.  The busy pipeline's steps end
# early, again and again, and nothing is lost or counted twice.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use FindBin;
use lib $FindBin::RealBin;
use Windowing qw(worker_node);

my $node = worker_node('step_time', q{
windowing.poll_interval = 20ms
windowing.worker_step_time = 200ms
});

# An aggregate that takes about a millisecond a row: 8,000 rows are about
# 8 s of work, in one step without the bound.
$node->safe_psql('postgres', q{
CREATE EXTENSION windowing;
CREATE FUNCTION slow_add(bigint, int) RETURNS bigint LANGUAGE plpgsql
AS $$ BEGIN PERFORM pg_sleep(0.001); RETURN $1 + $2; END $$;
CREATE AGGREGATE slow_sum(int) (SFUNC = slow_add, STYPE = bigint, INITCOND = '0');
CREATE TABLE busy (k int, ts bigint, v int);
CREATE TABLE small (k int, ts bigint, v int);
SELECT windowing.create_pipeline('busy', 'busy', 'ts', '{k}', windowing.tumbling('1 second'),
                                 'count(*) AS n, public.slow_sum(v) AS total', retention => 'consume');
SELECT windowing.create_pipeline('small', 'small', 'ts', '{k}', windowing.tumbling('1 second'),
                                 'count(*) AS n', retention => 'consume');
INSERT INTO busy SELECT i % 5, i, 1 FROM generate_series(1, 8000) i;});

# The busy pipeline has started on its backlog.
$node->poll_query_until('postgres',
	q{SELECT rows_consumed > 0 FROM windowing.pipeline WHERE name = 'busy'})
  or die 'the busy pipeline never started';

# Each small row closes the window of the one before: time until it shows.
my @latency;
for my $i (1 .. 3)
{
	my $ts = $i * 1000;
	my $t0 = time;
	$node->safe_psql('postgres', "INSERT INTO small VALUES (1, $ts, 1), (1, $ts + 1000, 1)");
	$node->poll_query_until('postgres',
		"SELECT count(*) > 0 FROM small_results WHERE window_start = $ts")
	  or die "window $ts of the small pipeline never fired";
	push @latency, time - $t0;
}
my $busy_left = $node->safe_psql('postgres',
	q{SELECT 8000 - rows_consumed FROM windowing.pipeline WHERE name = 'busy'});
cmp_ok($busy_left, '>', 0, 'the small pipeline was served while the busy one had a backlog');
cmp_ok((sort { $b <=> $a } @latency)[0], '<', 3,
	'the small pipeline waited at most a few steps of the busy one: ' . join(', ', map { sprintf '%.2f s', $_ } @latency));

ok($node->poll_query_until('postgres',
		q{SELECT rows_consumed = 8000 FROM windowing.pipeline WHERE name = 'busy'}),
	'the busy pipeline consumed its backlog');
cmp_ok($node->safe_psql('postgres', q{SELECT steps FROM windowing.pipeline WHERE name = 'busy'}),
	'>', 5, 'in many short steps');
$node->safe_psql('postgres', q{SELECT windowing.pause_pipeline('busy'); SELECT windowing.flush('busy')});
is($node->safe_psql('postgres', 'SELECT sum(n), sum(total), count(*) FROM busy_results'),
	'8000|8000|41', 'each row counted once, in its window');

$node->stop;
done_testing();
