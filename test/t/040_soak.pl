# Soak under faults: four producers insert into one queue read by a
# tumbling, a hopping and a session pipeline run by the background worker,
# while the worker is killed with SIGKILL at 20 random moments and the
# server is stopped with -m immediate twice.  Producers reconnect after
# each fault; each transaction writes its rows to the queue and to a copy,
# "truth", so truth holds exactly the committed rows.  At the end every
# pipeline's results equal an offline recomputation over truth, every late
# row is in each late table exactly once, and the queue is empty.
#
# The rows are built so that what a row does cannot depend on the order in
# which concurrent commits are consumed: on-time rows are at most 1 s out
# of order against a watermark 5 s behind, so none ever arrives behind the
# watermark (no re-firing, no session bridged after its cleanup); late rows
# are an hour old, sent once every pipeline has a watermark, so they are
# late whatever came before.  The recomputation then needs only the rows.
#
# The worker paces its rounds (windowing.worker_round_interval), so that
# commits are read together, and faults land inside paced rounds too.
#
# WINDOWING_SOAK_SECONDS sets how long the producers run (20 by default;
# 60 for the full soak).  The 22 faults are spread over that time.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use Windowing qw(worker_node differences);
use IPC::Run;
use List::Util qw(shuffle);
use Time::HiRes qw(time sleep usleep);

my $seconds = $ENV{WINDOWING_SOAK_SECONDS} || 20;
my $kills_wanted = 20;
my $stops_wanted = 2;

my $node = worker_node('soak', q{
log_statement = none
windowing.poll_interval = 20ms
windowing.queue_truncate_size = 8kB
windowing.worker_round_interval = 15ms
});

# A producer's transaction: 10 rows into the queue and the same into truth.
# Some rows are up to 1 s older than the clock; 3% are an hour old (late).
$node->safe_psql('postgres', q{
CREATE EXTENSION windowing;
CREATE SEQUENCE ids;
CREATE TABLE events (id bigint, k int, ts bigint, v int, late boolean);
CREATE TABLE truth (id bigint, k int, ts bigint, v int, late boolean, seq bigint);
SELECT windowing.create_pipeline('tum', 'events', 'ts', '{k}',
    windowing.tumbling('1 second'), 'count(*) AS n, sum(v) AS total',
    max_out_of_orderness => '5 seconds', allowed_lateness => '1 second', retention => 'consume');
SELECT windowing.create_pipeline('hop', 'events', 'ts', '{k}',
    windowing.hopping('2 seconds', '1 second'), 'count(*) AS n, sum(v) AS total',
    max_out_of_orderness => '5 seconds', allowed_lateness => '1 second', emit => 'append', retention => 'consume');
SELECT windowing.create_pipeline('ses', 'events', 'ts', '{k}',
    windowing.session('3 milliseconds'), 'count(*) AS n, sum(v) AS total',
    max_out_of_orderness => '5 seconds', allowed_lateness => '1 second', retention => 'consume');
CREATE FUNCTION produce(late_share float8) RETURNS void LANGUAGE sql AS $$
  WITH r AS (
    SELECT nextval('ids') AS id, (random() * 6)::int AS k, random() < late_share AS late,
           (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms,
           random() AS jitter, (random() * 100)::int AS v
    FROM generate_series(1, 10)),
  q AS (
    INSERT INTO events (id, k, ts, v, late)
    SELECT id, k, CASE WHEN late THEN now_ms - 3600000 - (jitter * 1000)::bigint
                       WHEN jitter < 0.2 THEN now_ms - (jitter * 5000)::bigint
                       ELSE now_ms END, v, late
    FROM r
    RETURNING id, k, ts, v, late, windowing_seq)
  INSERT INTO truth SELECT * FROM q
$$;
});

# Every pipeline has a watermark before the first late row is sent.
$node->safe_psql('postgres', 'SELECT produce(0)');
$node->poll_query_until('postgres', q{
SELECT bool_and(rows_consumed > 0 AND watermark IS NOT NULL) FROM windowing.pipeline_stats})
  or die 'the pipelines did not start';

# Each producer runs transactions until the deadline, retrying after any
# error: a fault breaks its connection, and while the server is down it
# cannot connect.
my $deadline = int(time()) + $seconds;
my $connstr = $node->connstr('postgres');
my @producers;
for (1 .. 4)
{
	push @producers, IPC::Run::start(
		[
			'bash', '-c', qq{
while [ \$(date +%s) -lt $deadline ]; do
	psql -X -q -d "$connstr" -c 'SELECT produce(0.03)' >/dev/null 2>&1 || sleep 0.05
done}
		]);
}

# Whether the server log reports, within 10 s, that process $pid died of
# SIGKILL.
sub killed_in_log
{
	my ($pid) = @_;
	for (1 .. 100)
	{
		return 1 if slurp_file($node->logfile) =~ /\(PID $pid\) was terminated by signal 9/;
		usleep(100_000);
	}
	return 0;
}

# Kills the worker, once one runs (after a fault, it may be coming back).
# A kill counts once the server reports it: a worker just killed can still
# be listed until the postmaster reaps it, and one already on its way out
# dies of something else, so then the next worker is killed instead.
my $last_killed = 0;
sub kill_worker
{
	for (;;)
	{
		$node->poll_query_until('postgres', qq{SELECT count(*) = 1 FROM pg_stat_activity
			WHERE backend_type = 'windowing worker' AND pid <> $last_killed})
		  or die 'no worker came back';
		my ($ret, $pid) = $node->psql('postgres',
			qq{SELECT pid FROM pg_stat_activity WHERE backend_type = 'windowing worker'
			   AND pid <> $last_killed});
		next unless $ret == 0 && $pid && kill('KILL', $pid);
		$last_killed = $pid;
		return if killed_in_log($pid);
	}
}

# 22 moments spread at random over the run; two of them stop the server.
my $start = time();
my @moments = sort { $a <=> $b } map { 1 + rand($seconds - 2) } 1 .. $kills_wanted + $stops_wanted;
my %stop_at = map { $_ => 1 } (shuffle(0 .. $#moments))[0 .. $stops_wanted - 1];
for my $i (0 .. $#moments)
{
	my $wait = $start + $moments[$i] - time();
	sleep($wait) if $wait > 0;
	if ($stop_at{$i})
	{
		$node->stop('immediate');
		$node->start;
		next;
	}
	kill_worker();
}
$_->finish for @producers;
my $log = slurp_file($node->logfile);
my $killed = () = $log =~ /"windowing worker" \(PID \d+\) was terminated by signal 9/g;
my $stopped = () = $log =~ /received immediate shutdown request/g;
is($killed, $kills_wanted, "the worker was killed with SIGKILL $killed times");
is($stopped, $stops_wanted, "the server was stopped with -m immediate $stopped times");

# Drain: the worker alone consumes every committed row, then end of input.
$node->poll_query_until('postgres', 'SELECT true') or die 'the server did not come back';
my ($total, $late) = split /\|/, $node->safe_psql('postgres',
	'SELECT count(*), count(*) FILTER (WHERE late) FROM truth');
ok($node->poll_query_until('postgres',
		"SELECT bool_and(rows_consumed = $total) FROM windowing.pipeline_stats"),
	"every pipeline consumed all $total committed rows");
$node->safe_psql('postgres',
	q{SELECT windowing.flush('tum'), windowing.flush('hop'), windowing.flush('ses')});
diag(sprintf('%d rows (%d late) from 4 producers in %d s, %d kills, %d immediate stops',
		$total, $late, $seconds, $killed, $stopped));

is(differences($node, 'postgres', 'SELECT k, window_start, n, total FROM tum_results',
		'SELECT k, windowing.tumble_start(ts, 1000), count(*), sum(v) FROM truth
		 WHERE NOT late GROUP BY 1, 2'),
	'0', 'tumbling results equal the offline recomputation');
# append mode with allowed lateness: each window's firing, then the row
# that ends its life, with the same result
for my $final ('false', 'true')
{
	is(differences($node, 'postgres',
			"SELECT k, window_start, n, total FROM hop_results WHERE is_final = $final",
			'SELECT t.k, w.window_start, count(*), sum(t.v)
			 FROM truth t, windowing.hop(t.ts, 2000, 1000) w WHERE NOT t.late GROUP BY 1, 2'),
		'0', "sliding results (is_final $final) equal the offline recomputation, each window once");
}
is(differences($node, 'postgres',
		'SELECT k, window_start, window_end, n, total FROM ses_results', q{
WITH s AS (SELECT k, unnest(windowing.sessions(ts, 3)) AS w FROM truth WHERE NOT late GROUP BY k)
SELECT s.k, (s.w).window_start, (s.w).window_end, count(*), sum(t.v)
FROM s JOIN truth t ON t.k = s.k AND NOT t.late
                    AND t.ts >= (s.w).window_start AND t.ts < (s.w).window_end
GROUP BY 1, 2, 3}),
	'0', 'session results equal the offline recomputation');

# Each late row is in each late table once, with every window it missed
# (a session row: its own window).
for my $p ([ 'tum', 'windowing.tumble(t.ts, 1000) w' ], [ 'hop', 'windowing.hop(t.ts, 2000, 1000) w' ],
	[ 'ses', '(VALUES (t.ts)) AS w(window_start)' ])
{
	my ($name, $windows) = @$p;
	is(differences($node, 'postgres',
			"SELECT (row_data->>'id')::bigint, reason,
			        (SELECT array_agg(m.window_start ORDER BY m.window_start) FROM unnest(missed_windows) m)
			 FROM ${name}_late",
			"SELECT t.id, 'late', (SELECT array_agg(w.window_start ORDER BY w.window_start) FROM $windows)
			 FROM truth t WHERE t.late"),
		'0', "each of the $late late rows is in ${name}_late once, with the windows it missed");
}

ok($node->poll_query_until('postgres', 'SELECT count(*) = 0 FROM events'),
	'the consumed queue is emptied');
is($node->safe_psql('postgres', q{SELECT string_agg(DISTINCT state, ',') FROM windowing.pipeline}),
	'running', 'every pipeline still runs');

$node->stop;
done_testing();
