#!/usr/bin/env bash
# The demo: builds and installs windowing, starts a throwaway PostgreSQL 15
# cluster (unix socket in a temporary folder, no TCP), runs the daily
# orders example of the Flink seed article, prints the windows and stops.
#
#   test/demo.sh
source "$(dirname "$0")/lib.sh"

need_packages
build_and_install

dir=$(mktemp -d)
trap 'stop_cluster "$dir"; rm -rf "$dir"' EXIT
say "starting a throwaway cluster in $dir"
start_cluster "$dir"

psql_cluster -q <<'SQL'
CREATE EXTENSION windowing;
SET timezone = 'Asia/Shanghai';
CREATE TEMP TABLE orders (ts timestamptz, amount int);
INSERT INTO orders VALUES
  ('2026-10-01 00:30', 10), ('2026-10-01 07:59', 20), ('2026-10-01 08:00', 30),
  ('2026-10-01 12:00', 40), ('2026-10-01 23:30', 50), ('2026-10-02 07:30', 60);

\echo
\echo Six orders, Beijing time, counted in one-day tumbling windows.
\echo
\echo '1. tumble(ts, ''1 day''): days start at 00:00 UTC = 08:00 in Beijing (Flink''s default)'
SELECT w.window_start, w.window_end, count(*) AS orders, sum(amount) AS revenue,
       string_agg(to_char(ts, 'MM-DD HH24:MI'), ', ' ORDER BY ts) AS which
FROM orders, windowing.tumble(ts, '1 day') w GROUP BY 1, 2 ORDER BY 1;

\echo '2. tumble(ts, ''1 day'', ''-8 hours''): Flink''s fixed offset, right for Beijing'
SELECT w.window_start, w.window_end, count(*) AS orders, sum(amount) AS revenue,
       string_agg(to_char(ts, 'MM-DD HH24:MI'), ', ' ORDER BY ts) AS which
FROM orders, windowing.tumble(ts, '1 day', '-8 hours') w GROUP BY 1, 2 ORDER BY 1;

\echo '3. tumble(ts, ''1 day'', tz => ''Asia/Shanghai''): local midnight in the zone'
SELECT w.window_start, w.window_end, count(*) AS orders, sum(amount) AS revenue,
       string_agg(to_char(ts, 'MM-DD HH24:MI'), ', ' ORDER BY ts) AS which
FROM orders, windowing.tumble(ts, '1 day', tz => 'Asia/Shanghai') w GROUP BY 1, 2 ORDER BY 1;

\echo '4. Why the zone form matters: a fixed offset is an hour off in summer in DST zones,'
\echo '   and local days are 23 or 25 hours long on change days (Europe/Berlin, 2026):'
SET timezone = 'Europe/Berlin';
SELECT d::date AS day,
       windowing.tumble_start(d, '1 day', '-1 hour') AS fixed_offset_start,
       w.window_start AS zone_start, w.window_end - w.window_start AS length
FROM unnest(ARRAY['2026-01-15 12:00', '2026-03-29 12:00', '2026-07-15 12:00',
                  '2026-10-25 12:00']::timestamptz[]) d,
     windowing.tumble(d, '1 day', tz => 'Europe/Berlin') w;

\echo
\echo '5. A pipeline: 5 s tumbling windows, 2 s out-of-orderness, 3 s allowed lateness;'
\echo '   events at 1, 2, 4, 6, 3, 8, 2, 11, 1, 13 s (the seed''s late-data example)'
SET timezone = 'UTC';
CREATE TABLE clicks (sec int, ts timestamptz);
\o /dev/null
SELECT windowing.create_pipeline('clicks', 'clicks', 'ts',
    assigner => windowing.tumbling('5 seconds'), aggregates => 'count(*) AS n, sum(sec) AS secs',
    max_out_of_orderness => '2 seconds', allowed_lateness => '3 seconds',
    emit => 'append', start => false, retention => 'consume');
\o
INSERT INTO clicks SELECT s, timestamptz '2026-01-01 00:00+00' + s * interval '1 second'
FROM unnest(ARRAY[1, 2, 4, 6, 3, 8, 2, 11, 1, 13]) s;
SELECT windowing.process('clicks') AS rows_consumed;
\o /dev/null
SELECT windowing.flush('clicks');
\o
\echo 'fired windows ([0,5) fires with 4 rows, then again with 5 when the late 2 s arrives):'
SELECT to_char(window_start, 'SS') AS start_s, to_char(window_end, 'SS') AS end_s, n, secs,
       fire_count, is_final
FROM clicks_results ORDER BY window_end, fire_count, is_final;
\echo 'late rows (the second 1 s came after [0,5) was cleaned up):'
SELECT event_time, watermark, reason FROM clicks_late;

\echo
\echo '6. Joining two queues: purchases and their payments in the same 10 s window (Flink''s'
\echo '   window join), a left join with 10 s allowed lateness'
CREATE TABLE purchases (id int, ts timestamptz, amount int);
CREATE TABLE payments (id int, ts timestamptz, method text);
\o /dev/null
SELECT windowing.create_window_join_pipeline('paid', 'purchases', 'ts', '{id}', 'payments', 'ts', '{id}',
    'purchases.id, purchases.amount, payments.method', windowing.tumbling('10 seconds'),
    allowed_lateness => '10 seconds', join_type => 'left', start => false, retention => 'consume');
\o
INSERT INTO purchases VALUES (1, '2026-01-01 00:00:01+00', 10), (2, '2026-01-01 00:00:05+00', 20),
                             (3, '2026-01-01 00:00:12+00', 30);
INSERT INTO payments VALUES (1, '2026-01-01 00:00:03+00', 'card'), (3, '2026-01-01 00:00:14+00', 'cash');
SELECT windowing.process('paid') AS rows_consumed;
\echo '[0,10) fired once the watermark passed it: order 1 and its payment; order 2 waits, unpaid so far:'
SELECT to_char(window_start, 'SS') AS start_s, id, amount, method FROM paid_results ORDER BY id;
INSERT INTO payments VALUES (2, '2026-01-01 00:00:09+00', 'card');
SELECT windowing.process('paid') AS rows_consumed;
\o /dev/null
SELECT windowing.flush('paid');
\o
\echo 'order 2''s payment came late but within the lateness: [0,10) fired again with that pair'
\echo 'alone (Flink would repeat order 1''s), and order 2 never shows as unpaid:'
SELECT to_char(window_start, 'SS') AS start_s, id, amount, method FROM paid_results
ORDER BY window_start, id;
SQL
say "done; the cluster is stopped and removed"
