# A hot standby of a server that runs pipelines.  Its sessions read the
# results and pipeline_stats as the primary committed them; every
# function that steps is refused there, as in any read-only transaction,
# and no windowing worker runs on it.  Promoted, it steps the pipeline on
# from the primary's last commit: the rows the primary had not consumed
# are counted once.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', q{
shared_preload_libraries = 'windowing'
windowing.poll_interval = 20ms
});
$primary->start;
$primary->safe_psql('postgres', q{
CREATE EXTENSION windowing;
CREATE TABLE q (k int, ts timestamptz, v int);
SELECT windowing.create_pipeline('p', 'q', 'ts', '{k}', windowing.tumbling('1 minute'),
                                 'count(*) AS n, sum(v) AS total', start => false,
                                 retention => 'consume');
INSERT INTO q SELECT g % 2, '2026-01-01 00:00+00'::timestamptz + g * interval '1 second', g
FROM generate_series(0, 89) g;
SELECT windowing.process('p');
INSERT INTO q SELECT g % 2, '2026-01-01 00:01:30+00'::timestamptz + g * interval '1 second', 1
FROM generate_series(0, 59) g;
});

$primary->backup('backup');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'backup', has_streaming => 1);
$standby->start;
$primary->wait_for_catchup($standby);

my $results = q{SELECT string_agg(format('%s %s %s %s', k, window_start, n, total), ', '
                                  ORDER BY k, window_start) FROM p_results};
my $first = $primary->safe_psql('postgres', $results);
is($standby->safe_psql('postgres', $results), $first,
	'the standby reads the results the primary committed');
is( $standby->safe_psql(
		'postgres', q{SELECT rows_consumed, backlog_rows FROM windowing.pipeline_stats WHERE name = 'p'}),
	'90|60', 'and the pipeline\'s progress and backlog');

for my $call (
	[ q{SELECT windowing.process('p')}, 'process' ],
	[ q{SELECT windowing.advance_watermark('p', '2026-01-01 01:00')}, 'advance_watermark' ],
	[ q{SELECT windowing.flush('p')}, 'flush' ])
{
	my ($sql, $fn) = @$call;
	my ($ret, $out, $err) = $standby->psql('postgres', $sql);
	like($err, qr/cannot execute \Q$fn\E\(\) in a read-only transaction/, "$fn() is refused on the standby");
}
my $windowing_processes =
  q{SELECT count(*) FROM pg_stat_activity WHERE backend_type LIKE 'windowing%'};
ok($primary->poll_query_until('postgres', "SELECT ($windowing_processes) > 0"),
	'the primary runs windowing\'s launcher');
is($standby->safe_psql('postgres', $windowing_processes),
	'0', 'no windowing worker runs on the standby');

$standby->promote;
$standby->safe_psql('postgres', q{SELECT windowing.process('p'); SELECT windowing.flush('p')});
is( $standby->safe_psql(
		'postgres', q{SELECT count(*), sum(n), sum(total) FROM p_results}),
	'6|150|4065', 'promoted, it counts the rows the primary had left, once');

done_testing();
