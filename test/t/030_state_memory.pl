# Window state lives in the memory of the process that steps a pipeline,
# within windowing.state_memory; past the budget a pipeline reads it from
# the heap table instead, with the very same results.  An aborted step
# leaves nothing behind in memory.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FindBin;
use lib $FindBin::RealBin;
use Windowing qw(differences);

my $node = PostgreSQL::Test::Cluster->new('state');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'windowing'
windowing.max_workers = 0
windowing.state_memory = 64MB
shared_buffers = 16MB
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION windowing;
CREATE TABLE events (k int, ts bigint, v int);
INSERT INTO events SELECT i % 97, i * 3 + (i * 7919) % 50, i FROM generate_series(1, 20000) i;
});

sub create
{
	my ($name) = @_;
	$node->safe_psql('postgres', qq{
SELECT windowing.create_pipeline('$name', 'events', 'ts', '{k}',
    windowing.hopping('300 milliseconds', '100 milliseconds'),
    'count(*) AS n, sum(v) AS total, max(v)', max_out_of_orderness => '40 milliseconds',
    allowed_lateness => '20 milliseconds', emit => 'append', start => false, retention => 'consume')});
}

# Steps of 500 rows, each reading the state the previous one left; then,
# in the same session (whose memory holds the state), a query.  "clocked":
# the clock of step n is n seconds past midnight (windowing.clock), then
# the wall clock again.
sub drain
{
	my ($name, $then, $clocked) = @_;
	my $clock = $clocked
	  ? q{PERFORM set_config('windowing.clock',
	                         (timestamptz '2026-01-01 00:00+00' + n * interval '1 second')::text, false);}
	  : '';
	return $node->safe_psql('postgres', qq{
DO \$\$ DECLARE n int := 0; BEGIN
  LOOP
    $clock
    EXIT WHEN windowing.process('$name', 500) = 0;
    n := n + 1;
    COMMIT;
  END LOOP;
  PERFORM set_config('windowing.clock', '', false);
END \$\$;
} . ($then // ''));
}

create('in_memory');
my ($mem, $spilled) = split /\|/, drain('in_memory',
	q{SELECT state_memory_bytes, state_spilled_bytes FROM windowing.pipeline_stats WHERE name = 'in_memory'});
cmp_ok($mem, '>', 0, "state held in memory ($mem bytes)");
is($spilled, '0', 'nothing spilled under the budget');
is($node->safe_psql('postgres',
	q{SELECT state_memory_bytes FROM windowing.pipeline_stats WHERE name = 'in_memory'}),
	'0', 'the state goes with the session that held it');

$node->append_conf('postgresql.conf', 'windowing.state_memory = 1kB');
$node->reload;
create('spilled');
($mem, $spilled) = split /\|/, drain('spilled',
	q{SELECT state_memory_bytes, state_spilled_bytes FROM windowing.pipeline_stats WHERE name = 'spilled'});
is($mem, '0', 'over the budget nothing is kept in memory');
cmp_ok($spilled, '>', 0, "state read from the heap ($spilled bytes)");

$node->safe_psql('postgres', q{SELECT windowing.flush('in_memory'), windowing.flush('spilled')});
is($node->safe_psql('postgres', q{
SELECT count(*) FROM (
  (SELECT k, window_start, n, total, max, fire_count, is_final FROM in_memory_results
   EXCEPT ALL SELECT k, window_start, n, total, max, fire_count, is_final FROM spilled_results)
  UNION ALL
  (SELECT k, window_start, n, total, max, fire_count, is_final FROM spilled_results
   EXCEPT ALL SELECT k, window_start, n, total, max, fire_count, is_final FROM in_memory_results)) d}),
	'0', 'identical results in memory and spilled');
is($node->safe_psql('postgres', q{
SELECT (SELECT count(*) FROM in_memory_late) = (SELECT count(*) FROM spilled_late)}),
	't', 'identical late rows');

# A store that outgrows the budget sheds keys to the heap, those no step
# touched lately first, and keeps the rest: a pipeline is never all on the
# heap, and its results are those of one whose state fits.  Half of the
# rows go to 40 keys, the rest to 30,000 keys seen once or twice.
$node->append_conf('postgresql.conf', 'windowing.state_memory = 256kB');
$node->reload;
$node->safe_psql('postgres', q{
CREATE TABLE mixed (k int, ts bigint, v int);
INSERT INTO mixed SELECT CASE WHEN i % 2 = 0 THEN i % 40 ELSE 40 + i % 30000 END,
                         i * 2 + (i * 7919) % 30, i
FROM generate_series(1, 60000) i;
});
for my $kind (['tumbled', q{windowing.tumbling('20 seconds')}],
	['sessioned', q{windowing.session('5 seconds')}])
{
	my ($name, $assigner) = @$kind;
	$node->safe_psql('postgres', qq{
SELECT windowing.create_pipeline('$name', 'mixed', 'ts', '{k}', $assigner,
    'count(*) AS n, sum(v) AS total', max_out_of_orderness => '30 milliseconds',
    allowed_lateness => '1 second', start => false, retention => 'keep')});
	my ($in_memory, $open, $bytes, $hits) = split /\|/, drain($name, qq{
SELECT memory_windows, open_windows, state_memory_bytes, state_hits FROM windowing.pipeline_stats
WHERE name = '$name'});
	cmp_ok($in_memory, '>', 0, "$name: windows kept in memory ($in_memory)");
	cmp_ok($in_memory, '<', $open, "$name: windows shed to the heap (of $open)");
	cmp_ok($bytes, '<=', 256 * 1024, "$name: within the budget ($bytes bytes)");
	cmp_ok($hits, '>', 0, "$name: keys found in memory ($hits)");
	$node->safe_psql('postgres', "SELECT windowing.flush('$name')");
}
is(differences($node, 'postgres', 'SELECT k, window_start, n, total FROM tumbled_results',
		q{SELECT k, windowing.tumble_start(ts, 20000), count(*), sum(v) FROM mixed GROUP BY 1, 2}),
	'0', 'tumbling windows shed to the heap: the windows of SQL');
is(differences($node, 'postgres', 'SELECT k, window_start, window_end, n, total FROM sessioned_results',
		q{SELECT k, (w).window_start, (w).window_end, count(*), sum(v) FROM (
		  SELECT k, v, windowing.session(ts, 5000) OVER (PARTITION BY k ORDER BY ts) AS w
		  FROM mixed) x GROUP BY 1, 2, 3}),
	'0', 'sessions shed to the heap: the sessions of SQL');

# Triggers that keep state but set no timer of their own (early firing by
# rows or by a column's move, purging) leave a window due at its end and
# cleanup only, and count windows are due at the end of input only: their
# pipelines shed keys as well.  So does early firing every interval of
# event time, whose early timers, kept in the windows' state, all fall on
# multiples of the interval: a step whose watermark passes one reads
# through every key on the heap and takes the keys with windows that have
# rows since they last fired, and the steps between read the keys their
# rows name; and early firing every interval of the clock, whose steps
# load every window when their clock passes a multiple of the interval.
# Each runs beside the same pipeline stepped and flushed with every window
# in memory, whose results (every firing: append mode) it must give; it
# is flushed in a new session, which reads the keys it needs from the
# heap (for count windows, every key: each fires its incomplete window).
my $tumbling = q{windowing.tumbling('20 seconds')};
my $early = q{pane = 'early'};
my @shed = (['rows', $tumbling, q{trigger => 'early every 40 rows'}, $early],
	['purged', $tumbling, q{trigger => 'purging early every 25 rows'}, $early],
	['delta', $tumbling, q{trigger => 'early when v moves more than 3000'}, $early],
	['rows_s', q{windowing.session('5 seconds')}, q{trigger => 'early every 40 rows'}, $early],
	['every', $tumbling, q{trigger => 'early every 5 seconds'}, $early],
	['every_s', q{windowing.session('5 seconds')}, q{trigger => 'early every 2 seconds'}, $early],
	['clock', $tumbling, q{trigger => 'early every 5 seconds of processing time'}, $early],
	['clock_s', q{windowing.session('5 seconds')},
		q{trigger => 'early every 3 seconds of processing time'}, $early],
	['count', q{windowing.counting(50, slide => 20)}, '', 'n < 50'],
	['hop', q{windowing.hopping('20 seconds', '5 seconds')}, '', 'n > 100'],
	['cumulate', q{windowing.cumulating('5 seconds', '20 seconds')}, '', 'n > 100']);
for my $budget ('64MB', '256kB')
{
	$node->append_conf('postgresql.conf', "windowing.state_memory = $budget");
	$node->reload;
	for my $case (@shed)
	{
		my ($what, $assigner, $trigger) = @$case;
		my $name = $what . ($budget eq '64MB' ? '_whole' : '_shed');
		$node->safe_psql('postgres', qq{
SELECT windowing.create_pipeline('$name', 'mixed', 'ts', '{k}', $assigner,
    'count(*) AS n, sum(v) AS total', max_out_of_orderness => '30 milliseconds',
    allowed_lateness => '1 second', emit => 'append', start => false, retention => 'keep'
    @{[ $trigger ? ", $trigger" : '' ]})});
		my $clocked = $what =~ /^clock/;
		if ($budget eq '64MB')
		{
			drain($name, "SELECT windowing.flush('$name')", $clocked);
			next;
		}
		my ($in_memory, $open, $bytes, $spilled, $misses) = split /\|/, drain($name, qq{
SELECT memory_windows, open_windows, state_memory_bytes, state_spilled_bytes, state_misses
FROM windowing.pipeline_stats WHERE name = '$name'}, $clocked);
		cmp_ok($in_memory, '>', 0, "$name: windows kept in memory ($in_memory)");
		cmp_ok($misses, '>', 0, "$name: keys read back from the heap ($misses)");
		cmp_ok($in_memory, '<', $open, "$name: windows shed to the heap (of $open)")
		  unless $what eq 'count';
		cmp_ok($bytes, '<=', 256 * 1024, "$name: within the budget ($bytes bytes)");
		is($spilled, '0', "$name: not read whole from the heap");
		$node->safe_psql('postgres', "SELECT windowing.flush('$name')");
	}
}
for my $case (@shed)
{
	my ($what, $seen) = @$case[0, 3];
	my $columns = 'k, window_start, window_end, n, total, fire_count, is_final'
	  . ($seen =~ /pane/ ? ', pane' : '');
	cmp_ok($node->safe_psql('postgres', "SELECT count(*) FROM ${what}_whole_results WHERE $seen"),
		'>', 30, "${what}: windows fired early, late, or incomplete at the end");
	is(differences($node, 'postgres', "SELECT $columns FROM ${what}_shed_results",
			"SELECT $columns FROM ${what}_whole_results"),
		'0', "${what}: shed to the heap, the results of a pipeline held in memory");
}

# An early timer that the watermark passes without new rows moves on to
# the next multiple past the watermark without the window being written:
# its stored state keeps the timer that passed, and a step that reads it
# back moves it on the same way.  Key a's window fires early at :10; :20
# and :30 pass without rows; read back from the heap, a row at :36 waits
# for :40, where it fires with both rows, as it does in memory.
$node->safe_psql('postgres', q{
CREATE TABLE idle (k text, ts bigint, v int);
SELECT windowing.create_pipeline(p, 'idle', 'ts', '{k}', windowing.tumbling('1 minute'),
    'count(*) AS n', emit => 'append', start => false, retention => 'keep',
    trigger => 'early every 10 seconds')
FROM unnest(ARRAY['idle_memory', 'idle_heap']) p});
# Each step in one session, whose memory holds idle_memory's state.
sub idle_steps
{
	return $node->safe_psql('postgres', 'DO $$ BEGIN ' . join('', map { qq{
INSERT INTO idle VALUES $_;
COMMIT;
PERFORM windowing.process('idle_memory');
PERFORM windowing._forget_state(id) FROM windowing.pipeline WHERE name = 'idle_heap';
PERFORM windowing.process('idle_heap');
COMMIT;} } @_) . q{ END $$;
SELECT string_agg(p || ' ' || n || '@' || fire_count, ', ' ORDER BY p, fire_count)
FROM (SELECT 'memory' AS p, * FROM idle_memory_results UNION ALL
      SELECT 'heap', * FROM idle_heap_results) r WHERE k = 'a'});
}
is(idle_steps("('a', 5000, 1), ('b', 12000, 1)", "('b', 35000, 1)", "('a', 36000, 1), ('b', 37000, 1)"),
	'heap 1@1, memory 1@1', 'an early timer passed without rows is not the one a new row waits for');
is(idle_steps("('b', 41000, 1)"), 'heap 1@1, heap 2@2, memory 1@1, memory 2@2',
	'the window fires at the next multiple past the watermark, with its new row');

# A step whose clock passes a multiple of the interval of an early
# trigger on the clock reads every window; one that then finds no timer
# due and changes nothing leaves the store at its clock, so that the steps
# after it read by key until the next multiple, as after a step that
# saves.  The windows fire early at :05; :10 passes without rows; a row
# at :13 fires at :15.
$node->safe_psql('postgres', q{
CREATE TABLE ticks (k int, ts timestamptz, v int);
SELECT windowing.create_pipeline('ticks', 'ticks', 'ts', '{k}', windowing.tumbling('1 day'),
    'count(*) AS n', emit => 'append', start => false, retention => 'keep',
    trigger => 'early every 5 seconds of processing time')});
# Steps in one session, each at second $step->[0] past midnight after rows
# @$step[1..]: what those whose second is in %$debug say at DEBUG1.
sub tick_steps
{
	my ($debug, @steps) = @_;
	my $script = '';
	for my $step (@steps)
	{
		my ($second, @rows) = @$step;
		$script .= "INSERT INTO ticks VALUES " . join(', ', @rows) . ";\n" if @rows;
		$script .= "SET windowing.clock = '2026-01-01 00:00:$second+00';\n";
		$script .= "SET client_min_messages = " . ($debug->{$second} ? 'debug1' : 'notice') . ";\n";
		$script .= "SELECT windowing.process('ticks');\n";
	}
	my ($ret, $out, $err) = $node->psql('postgres', $script);
	is($ret, 0, 'the clocked steps ran');
	return $err;
}
my $row = sub { "($_[0], '2026-01-01 00:00:00+00', 1)" };
my $said = tick_steps({'11' => 1, '12' => 1, '13' => 1},
	['01', $row->(1), $row->(2)], ['06'], ['11'], ['12'], ['13', $row->(1)], ['16']);
my @full = $said =~ /reads every window of its state/g;
is(scalar @full, 1, 'a step past a multiple that changes nothing reads every window; '
	  . 'the next ones read by key, a row between multiples too');
is($node->safe_psql('postgres', q{
SELECT string_agg(k || ':' || n || '@' || fire_count, ', ' ORDER BY k, fire_count) FROM ticks_results}),
	'1:1@1, 1:2@2, 2:1@1', 'the windows fire early at :05, and key 1 again at :15');

# open_windows() in a session that holds no store reads window_state row
# by row beneath state_log, whose changes and departures win, and builds
# each row on its own: what it holds at once is the log and a window
# (the heap's rows and the JSON of every row once took about 9 kB a
# window).  10,000 windows of the first hour fire and leave, 50,000 of the
# second stay open, 7,143 of them changed since the last fold.
$node->safe_psql('postgres', q{
CREATE TABLE wide (k int, ts bigint, v int);
INSERT INTO wide SELECT i, i % 1000, 1 FROM generate_series(1, 10000) i;
SELECT windowing.create_pipeline('wide', 'wide', 'ts', '{k}', windowing.tumbling('1 hour'),
    'count(*) AS n, sum(v) AS total', start => false, retention => 'keep')});
drain('wide');
$node->safe_psql('postgres',
	q{INSERT INTO wide SELECT i, 3600000 + i % 1000, 2 FROM generate_series(1, 50000) i});
drain('wide');
$node->safe_psql('postgres',
	q{INSERT INTO wide SELECT i, 3601000, 5 FROM generate_series(1, 50000, 7) i});
drain('wide');
my ($logged, $heap) = split /\|/, $node->safe_psql('postgres', q{
SELECT (SELECT count(*) FROM windowing.state_log), (SELECT count(*) FROM windowing.window_state)});
cmp_ok($logged, '>', 0, "wide: changes in state_log ($logged steps)");
cmp_ok($heap, '>', 0, "wide: windows in window_state ($heap)");
my ($windows, $sums, $peak) = split /[|\n]/, $node->safe_psql('postgres', q{
SELECT count(*), sum((results->>'n')::int) || '/' || sum((results->>'total')::int)
FROM windowing.open_windows('wide');
SELECT split_part(regexp_replace(pg_read_file('/proc/' || pg_backend_pid() || '/status'),
                                 '.*VmHWM:\s*', ''), ' ', 1)::int});
is("$windows|$sums", $node->safe_psql('postgres', q{
SELECT count(DISTINCT k), count(*) || '/' || sum(v) FROM wide WHERE ts >= 3600000}),
	'open_windows() of state on the heap and in the log: the windows of SQL');
cmp_ok($peak, '<', 150 * 1024, "open_windows() of 50,000 windows: peak memory $peak kB");

# A watermark that reaches the timers of many windows at once (flush(),
# a daily window's end) takes them out of memory or the heap and fires
# them in batches of 10,000, each batch's results written and its windows
# dropped before the next comes in.  60,000 windows fire at once: fired
# and gone at once, or fired on time and ended by the cleanup after the
# allowed lateness; tumbling windows and sessions; from the store of the
# session that stepped them, and from the heap in a new session.
$node->append_conf('postgresql.conf', 'windowing.state_memory = 64MB');
$node->reload;
$node->safe_psql('postgres', q{
CREATE TABLE many (k int, ts bigint, v int);
INSERT INTO many SELECT i % 60000, i % 50000, i FROM generate_series(1, 120000) i;
});
for my $kind (['tumble', q{windowing.tumbling('1 minute')}, '0'],
	['session', q{windowing.session('1 minute')}, 'min(ts)'])
{
	my ($what, $assigner, $start) = @$kind;
	for my $case (['once', q{emit => 'append'}],
		['kept', q{allowed_lateness => '1 minute', emit => 'upsert'}])
	{
		my ($how, $options) = @$case;
		for my $where ('memory', 'heap')
		{
			my $name = "${what}_${how}_$where";
			$node->safe_psql('postgres', qq{
SELECT windowing.create_pipeline('$name', 'many', 'ts', '{k}', $assigner,
    'count(*) AS n, sum(v) AS total', $options, start => false, retention => 'keep')});
			drain($name, $where eq 'memory' ? "SELECT windowing.flush('$name')" : undef);
			$node->safe_psql('postgres', "SELECT windowing.flush('$name')")
			  if $where eq 'heap';
			is(differences($node, 'postgres',
					"SELECT k, window_start, n, total, fire_count, is_final FROM ${name}_results",
					"SELECT k, $start, count(*), sum(v), 1, true FROM many GROUP BY k"),
				'0', "$name: 60,000 windows fired at once, in batches, as SQL says");
		}
	}
}

# Its memory: 100,000 windows on the heap (the step that made them shed
# them there) fire in a new session.
$node->append_conf('postgresql.conf', 'windowing.state_memory = 256kB');
$node->reload;
$node->safe_psql('postgres', q{
CREATE TABLE hundred (k int, ts bigint, v int);
INSERT INTO hundred SELECT i, i % 1000, 1 FROM generate_series(1, 100000) i;
SELECT windowing.create_pipeline('hundred', 'hundred', 'ts', '{k}', windowing.tumbling('1 hour'),
    'count(*) AS n, sum(v) AS total', start => false, retention => 'keep');
SELECT windowing.process('hundred', 1000000)});
$peak = $node->safe_psql('postgres', q{
SELECT windowing.flush('hundred');
SELECT split_part(regexp_replace(pg_read_file('/proc/' || pg_backend_pid() || '/status'),
                                 '.*VmHWM:\s*', ''), ' ', 1)::int});
$peak =~ s/.*\n//;
is($node->safe_psql('postgres', q{SELECT count(*), sum(n) FROM hundred_results}), '100000|100000',
	'flush() of 100,000 windows on the heap: all fired');
cmp_ok($peak, '<', 80 * 1024, "flush() of 100,000 windows on the heap: peak memory $peak kB");

# A step that aborts leaves the committed image in place: the next step,
# from another session, goes on from the committed state.
$node->append_conf('postgresql.conf', 'windowing.state_memory = 64MB');
$node->reload;
create('aborted');
$node->safe_psql('postgres', q{SELECT windowing.process('aborted', 5000)});
$node->safe_psql('postgres', q{BEGIN; SELECT windowing.process('aborted', 5000); ROLLBACK;});
create('straight');
$node->safe_psql('postgres', q{SELECT windowing.process('straight', 5000)});
drain('aborted');
drain('straight');

# A step that fired windows tells the pipeline's channel, at commit.
my $channel = $node->safe_psql('postgres',
	q{SELECT channel FROM windowing.pipelines WHERE name = 'straight'});
my ($out, $err);
$node->psql('postgres', qq{LISTEN $channel; SELECT windowing.flush('straight');},
	stdout => \$out, stderr => \$err);
like($out, qr/Asynchronous notification "$channel" with payload "\d+" received/,
	'LISTEN hears the windows a step fired');
$node->safe_psql('postgres', q{SELECT windowing.flush('aborted')});
is($node->safe_psql('postgres', q{
SELECT count(*) FROM (
  (SELECT k, window_start, n, total, fire_count FROM aborted_results
   EXCEPT ALL SELECT k, window_start, n, total, fire_count FROM straight_results)
  UNION ALL
  (SELECT k, window_start, n, total, fire_count FROM straight_results
   EXCEPT ALL SELECT k, window_start, n, total, fire_count FROM aborted_results)) d}),
	'0', 'an aborted step changes nothing');

# Pipeline ids are numbered per database, shared memory is one for the
# cluster: a pipeline never reads the image of its namesake id elsewhere.
# Two pipelines with id 1 and the same step counts take turns.
for my $db ('east', 'west')
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, q{
CREATE EXTENSION windowing;
CREATE TABLE events (k int, ts bigint, v int);
SELECT windowing.create_pipeline('sums', 'events', 'ts', '{k}',
    windowing.tumbling('100 milliseconds'), 'count(*) AS n, sum(v) AS total',
    start => false, retention => 'consume')});
}
for my $round (0 .. 3)
{
	for my $db ('east', 'west')
	{
		my $v = $db eq 'east' ? 1 : 1000;
		$node->safe_psql($db, qq{
INSERT INTO events SELECT i % 3, $round * 1000 + i, $v FROM generate_series(1, 500) i;
SELECT windowing.process('sums')});
	}
}
for my $db ('east', 'west')
{
	$node->safe_psql($db, q{SELECT windowing.flush('sums')});
	is(differences($node, $db, 'SELECT k, window_start, n, total FROM sums_results',
			'SELECT k, windowing.tumble_start(ts, 100), count(*), sum(v) FROM events GROUP BY 1, 2'),
		'0', "pipeline 1 of database \"$db\" reads only its own state");
}

$node->stop;
done_testing();
