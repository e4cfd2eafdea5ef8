# Helpers for the TAP tests of windowing.
#
# worker_node() starts a node with the library preloaded, so that the
# background workers run, and with restart_after_crash on, which
# PostgreSQL::Test::Cluster turns off: without it a SIGKILL of a worker
# shuts the whole cluster down.
#
# worker_pid() is the pid of the database's windowing worker (empty if
# none runs); wait_for_worker() waits until one does.
#
# kill_worker_between() runs a producer and then SIGKILLs the worker,
# wherever it is in its step, round after round, and waits for the
# postmaster to restart everything; it returns how many kills there were.
#
# differences() counts the rows two queries do not share (their symmetric
# difference as multisets), so that a pipeline's results can be asserted
# equal to the same windows computed with plain SQL over the committed rows.
#
# fault_pipelines() makes the exactly-once tests' queue, events, with a
# copy of every committed row in truth, and three pipelines on it: sums
# (tumbling), fires (hopping, append) and sess (sessions), of the sizes
# given in ms; fault_results_exact() flushes them and asserts that their
# results equal the same windows computed over truth.
package Windowing;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;
use Test::More;

our @EXPORT_OK = qw(worker_node differences worker_pid wait_for_worker kill_worker kill_worker_between
  fault_pipelines fault_results_exact);

sub worker_node
{
	my ($name, $settings) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'windowing'
restart_after_crash = on
$settings});
	$node->start;
	return $node;
}

sub worker_pid
{
	my ($node, $db) = @_;
	return $node->safe_psql($db // 'postgres',
		q{SELECT pid FROM pg_stat_activity WHERE backend_type = 'windowing worker'});
}

sub wait_for_worker
{
	my ($node, $db) = @_;
	$node->poll_query_until($db // 'postgres',
		q{SELECT count(*) = 1 FROM pg_stat_activity WHERE backend_type = 'windowing worker'})
	  or die 'no worker';
}

# SIGKILLs the worker "pid" and waits for the server to be back.  The
# postmaster restarts every process once it has reaped the killed one: until
# the pid is gone, a query may still get in before the restart, and the next
# one fail while the server recovers.
sub kill_worker
{
	my ($node, $pid) = @_;
	kill 'KILL', $pid or return 0;
	my $waited = 0;
	while (kill 0, $pid)
	{
		die "worker $pid did not go away" if $waited++ > 60 * 100;
		select(undef, undef, undef, 0.01);
	}
	$node->poll_query_until('postgres', 'SELECT true') or die 'server did not come back';
	return 1;
}

sub kill_worker_between
{
	my ($node, $rounds, $produce) = @_;
	my $kills = 0;
	for my $round (1 .. $rounds)
	{
		$produce->();
		wait_for_worker($node);
		my $pid = worker_pid($node);
		$kills += kill_worker($node, $pid) if $pid;
	}
	return $kills;
}

sub differences
{
	my ($node, $db, $results, $offline) = @_;
	return $node->safe_psql($db, qq{
WITH r AS ($results), o AS ($offline)
SELECT count(*) FROM ((TABLE r EXCEPT ALL TABLE o) UNION ALL (TABLE o EXCEPT ALL TABLE r)) d});
}

sub fault_pipelines
{
	my ($node, %ms) = @_;
	my ($size, $slide) = @{ $ms{hop} };
	$node->safe_psql('postgres', qq{
CREATE EXTENSION windowing;
CREATE TABLE events (k int, ts bigint, v int);
CREATE TABLE truth (k int, ts bigint, v int);
SELECT windowing.create_pipeline('sums', 'events', 'ts', '{k}',
    windowing.tumbling('$ms{tumble} milliseconds'), 'count(*) AS n, sum(v) AS total',
    max_out_of_orderness => '0', retention => 'consume');
SELECT windowing.create_pipeline('fires', 'events', 'ts', '{k}',
    windowing.hopping('$size milliseconds', '$slide milliseconds'), 'count(*) AS n',
    emit => 'append', retention => 'consume');
SELECT windowing.create_pipeline('sess', 'events', 'ts', '{k}',
    windowing.session('$ms{gap} milliseconds'), 'count(*) AS n, sum(v) AS total',
    retention => 'consume');
});
}

sub fault_results_exact
{
	my ($node, %ms) = @_;
	my ($size, $slide) = @{ $ms{hop} };
	$node->safe_psql('postgres',
		q{SELECT windowing.flush('sums'), windowing.flush('fires'), windowing.flush('sess')});
	is(differences($node, 'postgres', 'SELECT k, window_start, n, total FROM sums_results',
			"SELECT k, windowing.tumble_start(ts, $ms{tumble}), count(*), sum(v) FROM truth GROUP BY 1, 2"),
		'0', 'tumbling results equal the offline recomputation');
	is($node->safe_psql('postgres', q{
SELECT count(*) FROM (
  SELECT k, window_start, count(*) FROM fires_results GROUP BY 1, 2 HAVING count(*) <> 1) d}),
		'0', 'no window fired twice');
	is(differences($node, 'postgres', 'SELECT k, window_start, n FROM fires_results',
			"SELECT t.k, w.window_start, count(*) FROM truth t, windowing.hop(t.ts, $size, $slide) w GROUP BY 1, 2"),
		'0', 'sliding results equal the offline recomputation');
	is(differences($node, 'postgres', 'SELECT k, window_start, window_end, n, total FROM sess_results', qq{
WITH s AS (SELECT k, unnest(windowing.sessions(ts, $ms{gap})) AS w FROM truth GROUP BY k)
SELECT s.k, (s.w).window_start, (s.w).window_end, count(*), sum(t.v)
FROM s JOIN truth t ON t.k = s.k AND t.ts >= (s.w).window_start AND t.ts < (s.w).window_end
GROUP BY 1, 2, 3}),
		'0', 'session results equal the offline recomputation');
	is($node->safe_psql('postgres', 'SELECT sum(late_routed + late_dropped) FROM windowing.pipeline_stats'),
		'0', 'no row was late');
}

1;
