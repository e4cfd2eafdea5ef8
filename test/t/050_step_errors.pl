# Errors inside a step, with the worker running.  In each of three
# databases one pipeline's step fails, in a different way: its owner has
# revoked its own right to insert into the result table, a trigger on the
# result table raises (naming the role it runs as: the owner, never the
# worker's superuser), or a row holds text that the pipeline's aggregate
# cannot cast.  Only that pipeline's step is rolled back: a second pipeline
# on the same queue goes on.  The worker exits and comes back after a
# growing back-off; the error shows in pipeline_stats; after five failures
# in a row the pipeline is marked failed and left alone (no more errors, no
# crash restart).  Once the cause is fixed, resume_pipeline() goes on where
# the last committed step stopped: the results equal the recomputation over
# every committed row, none lost and none counted twice.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::Local qw(timegm);
use FindBin;
use lib $FindBin::RealBin;
use Windowing qw(worker_node differences);

my $node = worker_node('errors', q{
windowing.poll_interval = 20ms
});
$node->safe_psql('postgres', 'CREATE ROLE alice');

# fault => [what breaks the step, what fixes it, the error it gives, its
# SQLSTATE, detail and hint, and the arrival number of the row at fault
# (the 'n/a' row follows the first batch's 50) or none: a failure of the
# step's writes is no row's]
my %faults = (
	revoked => [
		'REVOKE INSERT ON revoked_results FROM alice',
		'GRANT INSERT ON revoked_results TO alice',
		'permission denied for table revoked_results', '42501', '', '', ''
	],
	raising => [
		q{CREATE FUNCTION closed() RETURNS trigger LANGUAGE plpgsql
		  AS $$ BEGIN RAISE EXCEPTION 'results are closed to %', current_user
		          USING DETAIL = 'Closed for the night.', HINT = 'Drop the trigger.'; END $$;
		  CREATE TRIGGER closed BEFORE INSERT OR UPDATE ON raising_results
		  FOR EACH ROW EXECUTE FUNCTION closed()},
		'DROP TRIGGER closed ON raising_results',
		'results are closed to alice', 'P0001', 'Closed for the night.', 'Drop the trigger.', ''
	],
	casting => [
		q{INSERT INTO events (k, ts, v, note) VALUES (1, 1500, 0, 'n/a');
		  INSERT INTO truth (k, ts, v, note) VALUES (1, 1500, 0, 'n/a')},
		q{UPDATE events SET note = '0' WHERE note = 'n/a';
		  UPDATE truth SET note = '0' WHERE note = 'n/a'},
		'invalid input syntax for type integer: "n/a"', '22P02', '', '', '51'
	]);
my @dbs = sort keys %faults;

sub as_alice
{
	my ($db, $sql) = @_;
	return $node->safe_psql($db, "SET ROLE alice; $sql");
}

# Batch b: 50 rows in [b s, b s + 50 ms), in the queue and in truth.
sub produce
{
	my ($db, $b) = @_;
	as_alice($db, qq{
BEGIN;
INSERT INTO events (k, ts, v, note) SELECT i % 3, $b * 1000 + i, i, '1' FROM generate_series(1, 50) i;
INSERT INTO truth (k, ts, v, note) SELECT i % 3, $b * 1000 + i, i, '1' FROM generate_series(1, 50) i;
COMMIT;});
}

# When the failed steps of a pipeline were logged, in seconds.
sub failures_at
{
	my ($log, $name) = @_;
	return map { /^(\d+)-(\d+)-(\d+) (\d+):(\d+):(\d+\.\d+) / ? timegm(0, $5, $4, $3, $2 - 1, $1) + $6 : () }
	  grep { /CONTEXT: .*background step of pipeline "$name"$/s }
	  split /^(?=\d{4}-\d\d-\d\d )/m, $log;
}

sub consumed
{
	my ($db, $name, $rows) = @_;
	return $node->poll_query_until($db, qq{
SELECT rows_consumed = $rows FROM windowing.pipeline_stats WHERE name = '$name'});
}

# Each database: a pipeline that will fail and one that will not, on one
# queue, both owned by alice; a first batch goes through both.
for my $db (@dbs)
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'CREATE EXTENSION windowing; GRANT CREATE ON SCHEMA public TO alice');
	as_alice($db, qq{
CREATE TABLE events (k int, ts bigint, v int, note text);
CREATE TABLE truth (k int, ts bigint, v int, note text);
SELECT windowing.create_pipeline('$db', 'events', 'ts', '{k}', windowing.tumbling('100 milliseconds'),
    'count(*) AS n, sum(v) AS total, sum(note::int) AS notes', retention => 'consume');
SELECT windowing.create_pipeline('${db}_ok', 'events', 'ts', '{k}', windowing.tumbling('100 milliseconds'),
    'count(*) AS n, sum(v) AS total', retention => 'consume');});
	produce($db, 1);
	ok(consumed($db, $db, 50) && consumed($db, "${db}_ok", 50), "$db: both pipelines run");
}

# Break one pipeline in each database, all at once so the back-offs overlap.
my $log_offset = -s $node->logfile;
for my $db (@dbs)
{
	as_alice($db, $faults{$db}[0]);
	produce($db, 2);
}
my %rows = map { $_ => $node->safe_psql($_, 'SELECT count(*) FROM truth') } @dbs;
for my $db (@dbs)
{
	ok(consumed($db, "${db}_ok", $rows{$db}), "$db: the other pipeline on the queue goes on");
	# five failures take 15 s of back-off, ample time for the other one
	is($node->safe_psql($db, "SELECT state FROM windowing.pipeline_stats WHERE name = '$db'"),
		'running', "$db: without waiting for the failing one to be given up");
}
for my $db (@dbs)
{
	ok($node->poll_query_until($db,
			"SELECT state = 'failed' FROM windowing.pipeline_stats WHERE name = '$db'"),
		"$db: the failing pipeline is marked failed");
	is($node->safe_psql($db,
			"SELECT rows_consumed, failures, last_error, last_error_sqlstate, last_error_detail,
			        last_error_hint, last_error_seq
			 FROM windowing.pipeline_stats WHERE name = '$db'"),
		join('|', 50, 5, @{ $faults{$db} }[2 .. 6]),
		"$db: no failed step counted a row; five failures, the error and its row are shown");
	# the last step that committed came before the failures
	is($node->safe_psql($db,
			"SELECT last_error_at > last_step_at AND last_error_at <= now() FROM windowing.pipeline_stats
			 WHERE name = '$db'"),
		't', "$db: and when the last error was recorded");
}
my $log = slurp_file($node->logfile, $log_offset);
for my $db (@dbs)
{
	like($log, qr/WARNING:  pipeline "$db" is marked failed after 5 errors in a row/,
		"$db: the log says the pipeline is marked failed");
}

# A failed pipeline is left alone: the other one consumes a new batch and
# the failed one neither runs nor adds an error.
for my $db (@dbs)
{
	produce($db, 3);
	ok(consumed($db, "${db}_ok", $rows{$db} + 50), "$db: the worker runs on past the failed pipeline");
}
$log = slurp_file($node->logfile, $log_offset);
for my $db (@dbs)
{
	my @failed_at = failures_at($log, $db);
	is(scalar(@failed_at), 5, "$db: five failed steps, then no more");
	# without the back-off of 1, 2, 4 and 8 s they would follow at once
	cmp_ok($failed_at[-1] - $failed_at[0], '>=', 14, "$db: spaced by a growing back-off");
}
unlike($log, qr/terminating any other active server processes/, 'no failure crashed the server');

# Fixed and resumed, the pipeline goes on from its last committed step.
for my $db (@dbs)
{
	as_alice($db, $faults{$db}[1]);
	as_alice($db, "SELECT windowing.resume_pipeline('$db')");
}
for my $db (@dbs)
{
	my $total = $node->safe_psql($db, 'SELECT count(*) FROM truth');
	ok(consumed($db, $db, $total), "$db: resumed, the pipeline consumes the rest");
	as_alice($db, "SELECT windowing.flush('$db'), windowing.flush('${db}_ok')");
	is($node->safe_psql($db, "SELECT state, failures, last_error IS NULL, last_error_at IS NULL,
			last_error_sqlstate IS NULL, last_error_detail IS NULL, last_error_hint IS NULL,
			last_error_seq IS NULL
			FROM windowing.pipeline_stats WHERE name = '$db'"), 'running|0|t|t|t|t|t|t',
		"$db: running again, its errors cleared");
	is(differences($node, $db, "SELECT k, window_start, n, total, notes, fire_count FROM ${db}_results",
			'SELECT k, windowing.tumble_start(ts, 100), count(*), sum(v), sum(note::int), 1
			 FROM truth GROUP BY 1, 2'),
		'0', "$db: results equal the offline recomputation, each window fired once");
	is(differences($node, $db, "SELECT k, window_start, n, total FROM ${db}_ok_results",
			'SELECT k, windowing.tumble_start(ts, 100), count(*), sum(v) FROM truth GROUP BY 1, 2'),
		'0', "$db: and so do the other pipeline's");
}

$node->stop;
done_testing();
