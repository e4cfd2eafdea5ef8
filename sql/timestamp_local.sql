-- The window functions over timestamp (without time zone): local time, with
-- no zone.  The windows are those of the timestamptz forms in UTC, read as
-- timestamps, and never depend on the session's TimeZone: every query runs
-- under two zones whose offsets (+05:30, -10:00) would move a cast value.
SET datestyle = ISO;
SET intervalstyle = postgres;
CREATE TEMP TABLE t (k int, ts timestamp);
INSERT INTO t VALUES (1, '2026-03-29 01:30'), (1, '2026-03-29 02:10'), (1, '2026-03-29 04:00'),
                     (2, '2026-10-25 02:30'), (2, '2026-10-31 23:59:59.999999');

-- The results of every form, under one zone and then the other.
CREATE FUNCTION pg_temp.all_forms() RETURNS TABLE (form text, k int, ts timestamp,
                                                   window_start timestamp, window_end timestamp,
                                                   window_time timestamp)
LANGUAGE sql AS $$
  SELECT 'tumble 1 hour', k, ts, w.* FROM t, windowing.tumble(ts, '1 hour') w
  UNION ALL
  SELECT 'tumble 1 day', k, ts, w.* FROM t, windowing.tumble(ts, '1 day') w
  UNION ALL
  SELECT 'tumble 1 month', k, ts, w.* FROM t, windowing.tumble(ts, '1 month') w
  UNION ALL
  SELECT 'tumble_start 7 days from Monday', k, ts, windowing.tumble_start(ts, '7 days', '4 days'), NULL, NULL FROM t
  UNION ALL
  SELECT 'hop 2 hours by 1', k, ts, w.* FROM t, windowing.hop(ts, '2 hours', '1 hour') w
  UNION ALL
  SELECT 'hop 3 months by 1', k, ts, w.* FROM t, windowing.hop(ts, '3 months', '1 month') w
  UNION ALL
  SELECT 'hop_start 1 day by 12 hours', k, ts, windowing.hop_start(ts, '1 day', '12 hours'), NULL, NULL FROM t
  UNION ALL
  SELECT 'cumulate 1 day to 1 month', k, ts, w.* FROM t, windowing.cumulate(ts, '1 day', '1 month') w
         WHERE w.window_end <= ts::date + 3   -- those ending within 3 days
  UNION ALL
  SELECT 'session 1 hour', k, ts, (windowing.session(ts, '1 hour') OVER (PARTITION BY k ORDER BY ts)).*
  FROM t
  UNION ALL
  SELECT 'sessions 1 hour', k, NULL, s.* FROM
    (SELECT k, windowing.sessions(ts, '1 hour') AS a FROM t GROUP BY k) g, unnest(g.a) s
$$;

SET TimeZone = 'Asia/Kolkata';
CREATE TEMP TABLE kolkata AS SELECT * FROM pg_temp.all_forms();
SET TimeZone = 'Pacific/Honolulu';
CREATE TEMP TABLE honolulu AS SELECT * FROM pg_temp.all_forms();
SELECT * FROM kolkata ORDER BY form, k, ts, window_start DESC, window_end;
-- the same under both zones: nothing differs
(SELECT * FROM kolkata EXCEPT ALL SELECT * FROM honolulu)
UNION ALL
(SELECT * FROM honolulu EXCEPT ALL SELECT * FROM kolkata);

-- The result types.
SELECT pg_typeof(windowing.tumble_start(ts, '1 hour')) AS tumble_start,
       pg_typeof((windowing.tumble(ts, '1 hour')).window_end) AS tumble_end,
       pg_typeof(windowing.hop_start(ts, '2 hours', '1 hour')) AS hop_start
FROM t LIMIT 1;

-- The same windows as the timestamptz forms give in UTC.
SELECT count(*) AS rows,
       count(*) FILTER (WHERE windowing.tumble_start(ts, '1 month', '0')
                        = windowing.tumble_start(ts AT TIME ZONE 'UTC', '1 month', '0', 'UTC')
                            AT TIME ZONE 'UTC') AS same_months,
       count(*) FILTER (WHERE windowing.tumble_start(ts, '90 minutes', '10 minutes')
                        = windowing.tumble_start(ts AT TIME ZONE 'UTC', '90 minutes', '10 minutes')
                            AT TIME ZONE 'UTC') AS same_90_minutes
FROM t;

-- Offsets, NULLs and the checks of the timestamptz forms.
SELECT windowing.tumble_start(timestamp '2026-03-29 01:30', '1 day', '6 hours') AS from_6am,
       windowing.tumble_start(timestamp '2026-03-29 07:30', '1 day', '6 hours') AS from_6am_too,
       windowing.tumble_start(NULL::timestamp, '1 day') IS NULL AS null_ts,
       windowing.tumble_start(timestamp '2026-03-29', NULL) IS NULL AS null_size;
SELECT windowing.tumble(timestamp '2026-03-29', '1 month 1 day');
SELECT windowing.tumble(timestamp '2026-03-29', '1 day', '1 month');
SELECT windowing.hop(timestamp '2026-03-29', '3 months', '2 months');
SELECT windowing.cumulate(timestamp '2026-03-29', '7 hours', '1 day');
SELECT windowing.tumble(timestamp 'infinity', '1 day');
SELECT windowing.tumble(timestamp '294276-12-31 23:00', '1 month');

-- A pipeline over a timestamp column: windows, watermark and late rows in
-- local time, whatever the session's TimeZone when each step runs.
\set SHOW_CONTEXT never
CREATE TABLE readings (k int, ts timestamp, v int);
-- a zone: a timestamp is no instant
SELECT windowing.create_pipeline('local_tz', 'readings', 'ts',
    assigner => windowing.tumbling('1 day', tz => 'UTC'), start => false, retention => 'consume');
-- the clock, for idle_timeout: an instant, not a local time
SELECT windowing.create_pipeline('local_idle', 'readings', 'ts',
    assigner => windowing.tumbling('1 day'), idle_timeout => '1 minute', start => false,
    retention => 'consume');
-- hours per key, 10 minutes out of order; months, on the timestamp's calendar
SELECT windowing.create_pipeline('local_h', 'readings', 'ts', '{k}',
    assigner => windowing.tumbling('1 hour'), aggregates => 'count(*) AS n, sum(v) AS s',
    max_out_of_orderness => '10 minutes', start => false, retention => 'consume');
SELECT windowing.create_pipeline('local_month', 'readings', 'ts',
    assigner => windowing.tumbling('1 month'), aggregates => 'count(*) AS n, sum(v) AS s',
    start => false);
SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod)
FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
WHERE c.relname IN ('local_h_results', 'local_h_late')
  AND a.attname IN ('window_start', 'window_end', 'window_time', 'event_time', 'watermark', 'missed_windows')
ORDER BY 1, a.attnum;
-- 02:30 moves the watermark to 02:19:59.999999, which fires [01:00, 02:00)
-- of key 1; 01:40 then comes too late for it.
INSERT INTO readings VALUES (1, '2026-03-29 01:10', 1), (1, '2026-03-29 01:50', 2),
    (2, '2026-03-29 02:05', 3), (1, '2026-03-29 02:30', 4), (1, '2026-03-29 01:40', 5);
SET TimeZone = 'Asia/Kolkata';
SELECT windowing.process('local_h');
SELECT k, window_start, window_end, window_time, n, s, fire_count, is_final FROM local_h_results;
SELECT event_time, watermark, reason, missed_windows, row_data FROM local_h_late;
SELECT * FROM windowing.open_windows('local_h') ORDER BY window_start, key::text;
SELECT watermark, watermark_time, max_event_time, watermark_ms, lag, rows_consumed, windows_fired,
       late_routed
FROM windowing.pipeline_stats WHERE name = 'local_h';
-- The watermark in the time column's type, as a literal or a timestamp.
SET TimeZone = 'Pacific/Honolulu';
SELECT windowing.advance_watermark('local_h', now());
SELECT windowing.advance_watermark('local_h', '2026-03-29 02:59:59.999999');
SELECT windowing.advance_watermark('local_h', timestamp '2026-03-29 03:00');
SELECT k, window_start, window_end, n, s FROM local_h_results ORDER BY window_start, k;
INSERT INTO readings VALUES (2, '2026-03-29 03:15', 6);
SELECT windowing.process('local_h');
SELECT windowing.flush('local_h');
SELECT k, window_start, window_end, n, s, is_final FROM local_h_results ORDER BY window_start, k;
SELECT watermark, lag, rows_consumed, windows_fired, late_routed
FROM windowing.pipeline_stats WHERE name = 'local_h';
-- every row in March, on the calendar of the timestamps themselves
SELECT windowing.process('local_month');
SELECT windowing.flush('local_month');
SELECT window_start, window_end, n, s FROM local_month_results;
SELECT windowing.drop_pipeline('local_h', drop_tables => true);
SELECT windowing.drop_pipeline('local_month', drop_tables => true);
DROP TABLE readings;
RESET TimeZone;
