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
package Windowing;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;

our @EXPORT_OK = qw(worker_node differences worker_pid wait_for_worker kill_worker kill_worker_between);

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

1;
