-- Calendar windows in a time zone: local midnights, hours and months,
-- correct across daylight saving time.
SET timezone = 'Asia/Shanghai';
SET datestyle = ISO;

-- Seed 000: the daily orders, with the zone instead of a fixed -8 hours.
CREATE TABLE orders (ts timestamptz, amount int);
INSERT INTO orders VALUES
  ('2026-10-01 00:30', 10), ('2026-10-01 07:59', 20), ('2026-10-01 08:00', 30),
  ('2026-10-01 12:00', 40), ('2026-10-01 23:30', 50), ('2026-10-02 07:30', 60);
SELECT w.window_start, w.window_end, count(*), sum(amount)
FROM orders, windowing.tumble(ts, '1 day', tz => 'Asia/Shanghai') w
GROUP BY 1, 2 ORDER BY 1;
DROP TABLE orders;

-- Europe/Berlin: the spring day has 23 hours, the autumn day 25.
SET timezone = 'Europe/Berlin';
SELECT d AS day, w.window_start, w.window_end, w.window_end - w.window_start AS length
FROM unnest(ARRAY['2026-03-28 12:00', '2026-03-29 12:00', '2026-03-30 12:00',
                  '2026-10-24 12:00', '2026-10-25 12:00', '2026-10-26 12:00']::timestamptz[]) d,
     windowing.tumble(d, '1 day', tz => 'Europe/Berlin') w
ORDER BY d;

-- A fixed offset (Flink's only option) is right in winter and an hour off
-- in summer; the zone is right all year.
SELECT d, windowing.tumble_start(d, '1 day', '-1 hour') AS fixed_offset,
       windowing.tumble_start(d, '1 day', tz => 'Europe/Berlin') AS zone
FROM unnest(ARRAY['2026-01-15 00:30', '2026-07-15 00:30']::timestamptz[]) d;

-- Hourly windows through the spring gap: 02:00-03:00 does not exist.
SELECT ts, w.window_start, w.window_end
FROM generate_series('2026-03-29 00:30+00'::timestamptz, '2026-03-29 02:30+00', '30 minutes') ts,
     windowing.tumble(ts, '1 hour', tz => 'Europe/Berlin') w
ORDER BY ts;

-- America/New_York, autumn: the hour 01:00-02:00 happens twice and makes
-- two hourly windows; they never overlap.
SET timezone = 'America/New_York';
SELECT ts, w.window_start, w.window_end, w.window_end - w.window_start AS length
FROM generate_series('2026-11-01 04:30+00'::timestamptz, '2026-11-01 07:30+00', '30 minutes') ts,
     windowing.tumble(ts, '1 hour', tz => 'America/New_York') w
ORDER BY ts;

-- Two-hour windows across the same night: the one holding the repeated
-- hour lasts three hours.
SELECT ts, w.window_start, w.window_end, w.window_end - w.window_start AS length
FROM generate_series('2026-11-01 03:30+00'::timestamptz, '2026-11-01 07:30+00', '1 hour') ts,
     windowing.tumble(ts, '2 hours', tz => 'America/New_York') w
ORDER BY ts;

-- Spring: the 02:00 hour is skipped, the day has 23 hours.
SELECT ts, w.window_start, w.window_end
FROM generate_series('2026-03-08 06:30+00'::timestamptz, '2026-03-08 07:30+00', '30 minutes') ts,
     windowing.tumble(ts, '1 hour', tz => 'America/New_York') w
ORDER BY ts;
SELECT w.window_start, w.window_end, w.window_end - w.window_start AS length
FROM windowing.tumble('2026-03-08 12:00'::timestamptz, '1 day', tz => 'America/New_York') w;

-- Every instant of a DST day is in exactly one hourly window and the
-- windows tile the day: 23 hours in spring, 25 in autumn.
SELECT day, count(DISTINCT w.window_start) AS windows,
       min(w.window_start) AS first_start, max(w.window_end) AS last_end,
       bool_and(ts >= w.window_start AND ts < w.window_end) AS contained
FROM (VALUES ('2026-03-08'::date), ('2026-11-01'::date)) v(day),
     generate_series(day::timestamptz, (day + 1)::timestamptz - interval '1 second', '1 minute') ts,
     windowing.tumble(ts, '1 hour', tz => 'America/New_York') w
GROUP BY day ORDER BY day;

-- America/Havana falls back from 01:00 to 00:00: 2025-11-02 is one day of
-- 25 hours from its first midnight (04:00 UTC), not an hour and a day.
-- date_trunc() reads the repeated midnight as the later one, even for 04:30
-- UTC, which it puts in a day starting after it.
SET timezone = 'UTC';
SELECT ts, w.window_start, w.window_end, w.window_end - w.window_start AS length,
       date_trunc('day', ts, 'America/Havana') AS date_trunc
FROM unnest(ARRAY['2025-11-02 03:59:59.999999', '2025-11-02 04:00', '2025-11-02 04:30', '2025-11-02 05:00',
                  '2025-11-02 05:30', '2025-11-03 04:59:59.999999', '2025-11-03 05:00']::timestamptz[]) ts,
     windowing.tumble(ts, '1 day', tz => 'America/Havana') w
ORDER BY ts;
-- the repeated hour is still two hourly windows
SELECT ts, w.window_start, w.window_end
FROM unnest(ARRAY['2025-11-02 04:30', '2025-11-02 05:30']::timestamptz[]) ts,
     windowing.tumble(ts, '1 hour', tz => 'America/Havana') w
ORDER BY ts;
-- In 2026 it falls back on November 1: the month is one window, from
-- 04:00 UTC on the 1st; so is the year; the day before is 24 hours.
SELECT unit, w.window_start, w.window_end
FROM unnest(ARRAY['1 day', '1 month', '1 year']) unit,
     windowing.tumble('2026-11-01 05:30'::timestamptz, unit::interval, tz => 'America/Havana') w
UNION ALL
SELECT 'day before', w.window_start, w.window_end
FROM windowing.tumble('2026-11-01 03:59:59.999999'::timestamptz, '1 day', tz => 'America/Havana') w;
-- hop and cumulate by day use the same days
SELECT * FROM windowing.hop('2025-11-02 05:30'::timestamptz, '2 days', '1 day', tz => 'America/Havana');
SELECT * FROM windowing.cumulate('2025-11-02 05:30'::timestamptz, '1 day', '1 month', tz => 'America/Havana')
LIMIT 2;
-- America/St_Johns fell back from 00:01 to 23:01 of the day before (1987 to
-- 2010): the repeated minutes before midnight belong to the day that had
-- begun, which lasts 25 hours.
SELECT ts, ts AT TIME ZONE 'America/St_Johns' AS local, w.window_start, w.window_end,
       w.window_end - w.window_start AS length
FROM unnest(ARRAY['2009-11-01 02:29:59.999999', '2009-11-01 02:30', '2009-11-01 02:31', '2009-11-01 03:30']::timestamptz[]) ts,
     windowing.tumble(ts, '1 day', tz => 'America/St_Johns') w
ORDER BY ts;
-- Pacific/Apia skipped 2011-12-30, crossing the date line at 10:00 UTC:
-- the two-day window of the 30th and 31st holds only the 31st.
SELECT * FROM windowing.hop('2011-12-31 12:00+14'::timestamptz, '2 days', '1 day', tz => 'Pacific/Apia');
SET timezone = 'America/New_York';

-- Calendar months and quarters, aligned to January 1970.
SELECT * FROM windowing.tumble('2026-02-15 12:00'::timestamptz, '1 month', tz => 'America/New_York');
SELECT * FROM windowing.tumble('2026-03-15 12:00'::timestamptz, '1 month', tz => 'America/New_York');
SELECT * FROM windowing.tumble('2026-08-15 12:00'::timestamptz, '3 months', tz => 'America/New_York');
SELECT * FROM windowing.tumble('2026-08-15 12:00'::timestamptz, '1 year', tz => 'America/New_York');
SELECT * FROM windowing.tumble('1969-12-31 23:00+00'::timestamptz, '1 month', tz => 'UTC');

-- An offset on the local clock: business days starting at 06:00.
SELECT * FROM windowing.tumble('2026-11-01 05:00'::timestamptz, '1 day', '6 hours', 'America/New_York');

-- hop on calendar cells: two-day windows sliding by a day across the
-- spring change.
SELECT * FROM windowing.hop('2026-03-08 10:00'::timestamptz, '2 days', '1 day', tz => 'America/New_York');

-- cumulate: month-to-date windows growing by a day, and year-to-date by
-- quarter.
SELECT * FROM windowing.cumulate('2026-03-29 10:00'::timestamptz, '1 day', '1 month', tz => 'America/New_York');
SELECT * FROM windowing.cumulate('2026-05-02 10:00'::timestamptz, '3 months', '1 year', tz => 'America/New_York');

-- Time zone names are case-insensitive, like PostgreSQL's.
SELECT windowing.tumble_start('2026-06-01 12:00'::timestamptz, '1 day', tz => 'europe/berlin');
RESET timezone;
