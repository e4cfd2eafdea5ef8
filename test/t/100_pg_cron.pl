# The pg_cron recipe of the operations guide, as written there: a pipeline
# left to pg_cron instead of the background worker (paused, so that the
# worker passes it by, while process() still runs it), on a cluster that
# listens on a unix socket only, hence cron.use_background_workers.
# Skipped where pg_cron (Debian's postgresql-15-cron) is not installed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $pkglib = `pg_config --pkglibdir`;
chomp $pkglib;
plan skip_all => "pg_cron is not installed (apt-get install postgresql-15-cron)"
  unless -f "$pkglib/pg_cron.so";

my $node = PostgreSQL::Test::Cluster->new('cron');
$node->init;
$node->append_conf('postgresql.conf', q{
shared_preload_libraries = 'windowing, pg_cron'
cron.database_name = 'postgres'
cron.use_background_workers = on
max_worker_processes = 16
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION windowing;
CREATE EXTENSION pg_cron;
SELECT windowing.create_queue('readings', 'sensor int, ts timestamptz, value float8');
SELECT windowing.create_pipeline('per_minute', 'readings', 'ts', '{sensor}',
    windowing.tumbling('1 minute'), 'count(*) AS n, avg(value) AS mean', start => false);
INSERT INTO readings VALUES (1, '2026-01-01 12:00:10+00', 1.0), (1, '2026-01-01 12:00:20+00', 3.0),
                            (2, '2026-01-01 12:00:30+00', 5.0), (1, '2026-01-01 12:01:05+00', 7.0);});

# the recipe: every minute, one step of the pipeline
$node->safe_psql('postgres', q{
SELECT cron.schedule('windowing per_minute', '* * * * *',
                     $$SELECT windowing.process('per_minute')$$);
});

ok( $node->poll_query_until(
		'postgres', q{SELECT rows_consumed = 4 FROM windowing.pipeline_stats WHERE name = 'per_minute'},
		't'),
	'pg_cron runs the step within a minute or two');
is( $node->safe_psql(
		'postgres', q{SELECT sensor, window_start AT TIME ZONE 'UTC', n, mean
		FROM per_minute_results ORDER BY window_start, sensor}),
	"1|2026-01-01 12:00:00|2|2\n2|2026-01-01 12:00:00|1|5",
	'the fired minute, exactly once');
is( $node->safe_psql(
		'postgres', q{SELECT count(*) > 0, bool_and(status = 'succeeded')
		FROM cron.job_run_details WHERE command LIKE '%windowing.process%'}),
	't|t', 'and every run of the job succeeded');

$node->stop;
done_testing();
