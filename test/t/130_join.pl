# Join pipelines exactly once under faults: the background worker runs an
# inner, a left outer and a full outer interval join, an inner tumbling and
# a full outer hopping window join, an inner session window join, and
# aggregates over a full tumbling window join (upserted per key and
# window), of two consumed queues fed by
# batches of producer transactions; between batches the worker is killed
# with SIGKILL (wherever it is in its step) and the server is stopped with
# -m immediate once.  Each result table must equal the same join in plain
# SQL over the committed rows: no pair lost or written twice, and each row
# that met nothing written once, with the other side's columns NULL.  The
# window joins' watermark trails by less than the payments' disorder and
# their allowed lateness covers it, so windows fire early and fire again
# for late rows, each time with the new pairs alone.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use Windowing qw(worker_node differences kill_worker_between);

my $node = worker_node('join', q{
windowing.poll_interval = 20ms
windowing.queue_truncate_size = 64kB
});

# The full join names its inputs by aliases, the others by table names.
$node->safe_psql('postgres', q{
CREATE EXTENSION windowing;
SELECT windowing.create_queue('orders', 'k int, ts bigint, amount int', 'consume');
SELECT windowing.create_queue('payments', 'k int, ts bigint, method text', 'consume');
CREATE TABLE orders_truth (k int, ts bigint, amount int);
CREATE TABLE payments_truth (k int, ts bigint, method text);
SELECT windowing.create_join_pipeline('inner_join', 'orders', 'ts', '{k}', 'payments', 'ts', '{k}',
    'orders.k, orders.ts AS ordered_at, orders.amount, payments.ts AS paid_at, payments.method',
    lower => '0', upper => '15 milliseconds', max_out_of_orderness => '50 milliseconds');
SELECT windowing.create_join_pipeline('left_join', 'orders', 'ts', '{k}', 'payments', 'ts', '{k}',
    'orders.k, orders.ts AS ordered_at, orders.amount, payments.ts AS paid_at, payments.method',
    lower => '0', upper => '15 milliseconds', max_out_of_orderness => '50 milliseconds',
    join_type => 'left');
SELECT windowing.create_join_pipeline('full_join', 'orders', 'ts', '{k}', 'payments', 'ts', '{k}',
    'o.k AS order_k, o.ts AS ordered_at, o.amount, p.k AS payment_k, p.ts AS paid_at, p.method',
    lower => '0', upper => '15 milliseconds', max_out_of_orderness => '50 milliseconds',
    join_type => 'full', left_alias => 'o', right_alias => 'p');
SELECT windowing.create_window_join_pipeline('tumble_join', 'orders', 'ts', '{k}', 'payments', 'ts', '{k}',
    'orders.k, orders.ts AS ordered_at, orders.amount, payments.ts AS paid_at, payments.method',
    windowing.tumbling('10 milliseconds'), max_out_of_orderness => '5 milliseconds',
    allowed_lateness => '50 milliseconds');
SELECT windowing.create_window_join_pipeline('hop_join', 'orders', 'ts', '{k}', 'payments', 'ts', '{k}',
    'o.k AS order_k, o.ts AS ordered_at, o.amount, p.k AS payment_k, p.ts AS paid_at, p.method',
    windowing.hopping('20 milliseconds', '10 milliseconds'), max_out_of_orderness => '5 milliseconds',
    allowed_lateness => '50 milliseconds', join_type => 'full', left_alias => 'o', right_alias => 'p');
SELECT windowing.create_window_join_pipeline('session_join', 'orders', 'ts', '{k}', 'payments', 'ts', '{k}',
    'orders.k, orders.ts AS ordered_at, orders.amount, payments.ts AS paid_at, payments.method',
    windowing.session('5 milliseconds'), max_out_of_orderness => '50 milliseconds');
SELECT windowing.create_window_join_pipeline('agg_join', 'orders', 'ts', '{k}', 'payments', 'ts', '{k}',
    'count(o.amount) AS orders, count(p.method) AS payments, sum(o.amount) AS amount',
    windowing.tumbling('10 milliseconds'), max_out_of_orderness => '5 milliseconds',
    allowed_lateness => '50 milliseconds', join_type => 'full', left_alias => 'o', right_alias => 'p');
});

my $seed = $ENV{WINDOWING_SEED} // time();
srand($seed);
diag("seed $seed");

# Producers: batches of each queue in their own transactions, the orders'
# and the payments of a batch committed in either order.  Orders come in time order,
# a few units apart over six keys, so that a key's orders are about the
# upper bound apart: many payments meet several orders, and some orders and
# payments meet nothing.  Payments come in the order of their orders, so at
# most 16 units out of order, well within max_out_of_orderness: no row is
# late.  Payments exactly at both bounds, just outside them (one before the
# order, 16 after) and for a key with no orders exercise the edges of the
# interval.
my $t = 0;
sub produce
{
	my ($batches) = @_;
	for (1 .. $batches)
	{
		my (@orders, @payments);
		for my $i (1 .. 20)
		{
			$t += 1 + int(rand(3));
			my $k = 1 + int(rand(6));
			push @orders, "($k, $t, $i)";
			my $r = rand();
			for (1 .. ($r < 0.3 ? 0 : $r < 0.8 ? 1 : 2))
			{
				my $d = rand() < 0.3 ? (0, 15)[int(rand(2))] : int(rand(16));
				push @payments, "($k, " . ($t + $d) . ", 'card')";
			}
			push @payments, "($k, " . ($t - 1) . ", 'before')" if rand() < 0.1;
			push @payments, "($k, " . ($t + 16) . ", 'after')" if rand() < 0.1;
			push @payments, "(99, " . ($t + int(rand(16))) . ", 'stray')" if rand() < 0.1;
		}
		my $o = join(', ', @orders);
		my $p = join(', ', @payments);
		# two producers, each committing its own batch, in either order
		my @commits = ("BEGIN; INSERT INTO orders VALUES $o; INSERT INTO orders_truth VALUES $o; COMMIT;");
		push @commits, "BEGIN; INSERT INTO payments VALUES $p; INSERT INTO payments_truth VALUES $p; COMMIT;"
		  if @payments;
		@commits = reverse @commits if rand() < 0.5;
		$node->safe_psql('postgres', $_) for @commits;
	}
}

my $kills = kill_worker_between($node, 8, sub { produce(5 + int(rand(10))) });
produce(10);
$node->stop('immediate');
$node->start;
produce(10);
ok($kills >= 6, "the worker was killed $kills times while producers inserted");

# Drain: every committed row of both queues read by every pipeline.
my $orders = $node->safe_psql('postgres', 'SELECT count(*) FROM orders_truth');
my $payments = $node->safe_psql('postgres', 'SELECT count(*) FROM payments_truth');
my $total = $orders + $payments;
ok($node->poll_query_until('postgres',
		"SELECT count(*) = 7 AND bool_and(rows_consumed = $total) FROM windowing.pipeline_stats"),
	"every pipeline consumed all $orders orders and $payments payments");

# Before the end of input, the watermark alone wrote the orders that met
# nothing long ago: the outer joins do not wait for flush().
cmp_ok($node->safe_psql('postgres', q{
SELECT count(*) FROM left_join_results l
WHERE l.paid_at IS NULL AND l.ordered_at < (SELECT max(ts) - 200 FROM orders_truth)}),
	'>', 0, 'the left join wrote unmatched orders as its watermark passed them');

# The window joins wrote pairs before the end of input.
cmp_ok($node->safe_psql('postgres', 'SELECT count(*) FROM tumble_join_results'), '>', 0,
	'the tumbling join wrote pairs as its watermark passed windows');
$node->safe_psql('postgres', q{
SELECT windowing.flush(name) FROM windowing.pipelines ORDER BY name});

my $on = 'o.k = p.k AND p.ts BETWEEN o.ts + 0 AND o.ts + 15';
my $inner = $node->safe_psql('postgres', "SELECT count(*) FROM orders_truth o JOIN payments_truth p ON $on");
my $alone = $node->safe_psql('postgres', "SELECT count(*) FROM orders_truth o FULL JOIN payments_truth p ON $on
WHERE o.k IS NULL OR p.k IS NULL");
diag("$inner pairs, $alone rows alone");
ok($inner > 0 && $alone > 0, 'the rows make both pairs and rows that meet nothing');

is(differences($node, 'postgres', 'SELECT k, ordered_at, amount, paid_at, method FROM inner_join_results',
		"SELECT o.k, o.ts, o.amount, p.ts, p.method FROM orders_truth o JOIN payments_truth p ON $on"),
	'0', 'inner join results equal the join of the committed rows');
is(differences($node, 'postgres', 'SELECT k, ordered_at, amount, paid_at, method FROM left_join_results',
		"SELECT o.k, o.ts, o.amount, p.ts, p.method FROM orders_truth o LEFT JOIN payments_truth p ON $on"),
	'0', 'left join results equal the left join of the committed rows');
is(differences($node, 'postgres',
		'SELECT order_k, ordered_at, amount, payment_k, paid_at, method FROM full_join_results',
		"SELECT o.k, o.ts, o.amount, p.k, p.ts, p.method FROM orders_truth o FULL JOIN payments_truth p ON $on"),
	'0', 'full join results equal the full join of the committed rows');

# A window join pairs the rows of a key in each of their windows; the full
# one writes each row of a window without rows of the other side alone.
my $windows = q{
WITH o AS (SELECT o.*, w.window_start, w.window_end FROM orders_truth o, windowing.%s w),
     p AS (SELECT p.*, w.window_start, w.window_end FROM payments_truth p, windowing.%s w)};
my $tumble = sprintf($windows, 'tumble(o.ts, 10)', 'tumble(p.ts, 10)');
my $hop = sprintf($windows, 'hop(o.ts, 20, 10)', 'hop(p.ts, 20, 10)');
my $same = 'o.k = p.k AND o.window_start = p.window_start AND o.window_end = p.window_end';
is(differences($node, 'postgres',
		'SELECT window_start, window_end, k, ordered_at, amount, paid_at, method FROM tumble_join_results',
		"$tumble SELECT o.window_start, o.window_end, o.k, o.ts, o.amount, p.ts, p.method
		 FROM o JOIN p ON $same"),
	'0', 'tumbling window join results equal the join of the committed rows in their windows');
is(differences($node, 'postgres',
		'SELECT window_start, window_end, order_k, ordered_at, amount, payment_k, paid_at, method
		 FROM hop_join_results',
		"$hop SELECT coalesce(o.window_start, p.window_start), coalesce(o.window_end, p.window_end),
		        o.k, o.ts, o.amount, p.k, p.ts, p.method FROM o FULL JOIN p ON $same"),
	'0', 'full hopping window join results equal the full join of the committed rows in their windows');
# Sessions of both queues' rows together, per key, as the SQL session
# function makes them: no row comes late enough to touch a session that
# left, so each pair is written once, with its session's final bounds.
is(differences($node, 'postgres',
		'SELECT window_start, window_end, k, ordered_at, amount, paid_at, method FROM session_join_results',
		q{WITH u AS (SELECT 'o' AS side, k, ts, amount, NULL AS method FROM orders_truth
		             UNION ALL SELECT 'p', k, ts, NULL, method FROM payments_truth),
		       s AS (SELECT u.*, (windowing.session(u.ts, 5::bigint) OVER (PARTITION BY u.k ORDER BY u.ts)).*
		             FROM u)
		  SELECT o.window_start, o.window_end, o.k, o.ts, o.amount, p.ts, p.method
		  FROM s o JOIN s p ON o.side = 'o' AND p.side = 'p' AND o.k = p.k AND o.window_start = p.window_start}),
	'0', 'session window join results equal the pairs of the committed rows in their sessions');
is(differences($node, 'postgres',
		'SELECT k, window_start, window_end, orders, payments, amount FROM agg_join_results',
		"$tumble SELECT coalesce(o.k, p.k), coalesce(o.window_start, p.window_start),
		        coalesce(o.window_end, p.window_end), count(o.amount), count(p.method), sum(o.amount)
		 FROM o FULL JOIN p ON $same GROUP BY 1, 2, 3"),
	'0', 'aggregates of the full tumbling window join equal those of the committed rows');

is($node->safe_psql('postgres', q{
SELECT (SELECT count(*) FROM inner_join_late) + (SELECT count(*) FROM left_join_late)
     + (SELECT count(*) FROM full_join_late) + (SELECT count(*) FROM tumble_join_late)
     + (SELECT count(*) FROM hop_join_late) + (SELECT count(*) FROM agg_join_late)
     + (SELECT count(*) FROM session_join_late)}),
	'0', 'no row was late');
is($node->safe_psql('postgres', 'SELECT sum(late_routed + late_dropped) FROM windowing.pipeline_stats'),
	'0', 'no row was counted late');
# a kill ends a step without an error; a failure would be the join's own
is($node->safe_psql('postgres',
		'SELECT sum(failures) || \' \' || count(last_error) FROM windowing.pipeline_stats'),
	'0 0', 'no step failed');
# the end of input leaves nothing to meet
is($node->safe_psql('postgres', q{
SELECT sum(n) FROM (
  SELECT count(*) AS n FROM windowing.open_windows('inner_join')
  UNION ALL SELECT count(*) FROM windowing.open_windows('left_join')
  UNION ALL SELECT count(*) FROM windowing.open_windows('full_join')
  UNION ALL SELECT count(*) FROM windowing.state_log
  UNION ALL SELECT count(*) FROM tumble_join_left_state UNION ALL SELECT count(*) FROM tumble_join_right_state
  UNION ALL SELECT count(*) FROM hop_join_left_state UNION ALL SELECT count(*) FROM hop_join_right_state
  UNION ALL SELECT count(*) FROM agg_join_left_state UNION ALL SELECT count(*) FROM agg_join_right_state
  UNION ALL SELECT count(*) FROM session_join_left_state UNION ALL SELECT count(*) FROM session_join_right_state) s}),
	'0', 'flush left no rows kept and no log of them');

# Consumed queue storage was reclaimed in bulk while the pipelines ran, and
# once they caught up no queue stays past windowing.queue_truncate_size.
cmp_ok($node->safe_psql('postgres', 'SELECT count(*) FROM orders'), '<', $orders,
	'the orders queue was truncated along the way');
cmp_ok($node->safe_psql('postgres', 'SELECT count(*) FROM payments'), '<', $payments,
	'the payments queue was truncated along the way');
ok($node->poll_query_until('postgres', q{
SELECT pg_relation_size('orders') < 64 * 1024 AND pg_relation_size('payments') < 64 * 1024}),
	'the worker emptied the consumed queues');

$node->stop;
done_testing();
