# The library preloaded and not: GUC prefix reservation, restarts, and the
# SQL functions' independence from the session's time zone.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('preloaded');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'windowing'");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION windowing');

# With the library preloaded, a misspelt windowing.* setting is refused.
my ($ret, $out, $err) =
  $node->psql('postgres', 'SET windowing.no_such_setting = 1');
isnt($ret, 0, 'unknown windowing.* setting is refused');
like($err, qr/invalid configuration parameter name "windowing\.no_such_setting"/,
	'the error names the setting');

# Calendar windows depend on tz, never on the session's TimeZone.
my $q = q{SELECT windowing.tumble_start('2026-03-29 12:00+00', '1 day', tz => 'Europe/Berlin') AT TIME ZONE 'UTC'};
my $berlin = $node->safe_psql('postgres', $q);
is($berlin, '2026-03-28 23:00:00', 'Berlin day starts at 23:00 UTC');
is($node->safe_psql('postgres', "SET timezone = 'Pacific/Auckland'; $q"),
	$berlin, 'same window under another session time zone');

# The extension survives a restart of the server.
$node->restart;
is($node->safe_psql('postgres', q{SELECT (windowing.tumble(1640697324792, 5)).window_start}),
	'1640697324790', 'functions work after restart');
$node->stop;

# The SQL functions need no preloading.
my $plain = PostgreSQL::Test::Cluster->new('plain');
$plain->init;
$plain->start;
$plain->safe_psql('postgres', 'CREATE EXTENSION windowing');
is($plain->safe_psql('postgres',
		q{SELECT string_agg(window_start::text, ',') FROM windowing.hop(1640697324792, 5, 2)}),
	'1640697324792,1640697324790,1640697324788',
	'hop works without shared_preload_libraries');
$plain->stop;

done_testing();
