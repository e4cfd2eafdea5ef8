-- ISO weeks: 7-day windows from Monday 00:00.  Without an offset, 7-day
-- windows align to 1970-01-01, a Thursday; Monday 1970-01-05 is 4 days
-- later, so "offset" => '4 days' gives Mondays (as does '-3 days', Monday
-- 1969-12-29).  2026-11-30 is a Monday: 20787 days after 1970-01-01, and
-- 20787 = 7 * 2969 + 4.
SET datestyle = ISO;
SET intervalstyle = postgres;
SET TimeZone = 'UTC';
SELECT '2026-11-30'::date - '1970-01-01'::date AS days, ('2026-11-30'::date - '1970-01-01'::date) % 7 AS rem,
       to_char('1970-01-01'::date, 'Day') AS epoch_day, to_char('2026-11-30'::date, 'Day') AS day;
SELECT ts, windowing.tumble_start(ts, '7 days') AS no_offset,
       windowing.tumble_start(ts, '7 days', '4 days') AS monday,
       windowing.tumble_start(ts, '7 days', '-3 days') AS same_monday,
       to_char(windowing.tumble_start(ts, '7 days', '4 days'), 'IYYY-"W"IW-ID') AS iso_week
FROM unnest(ARRAY['2026-11-29 23:59:59.999999+00', '2026-11-30 00:00+00', '2026-12-02 12:00+00',
                  '2026-12-06 23:59:59.999999+00', '2026-12-07 00:00+00']::timestamptz[]) ts;
SELECT (windowing.tumble(timestamptz '2026-12-02 12:00+00', '7 days', '4 days')).*;
-- epoch integer time (milliseconds): 4 days are 345600000 ms
SELECT windowing.tumble_start(1796212800000, 604800000, 345600000) AS monday_ms,
       to_timestamp(windowing.tumble_start(1796212800000, 604800000, 345600000) / 1000.0) AS monday;

-- Local Mondays.  A fixed offset is an hour off for half the year where
-- clocks change: '4 days' less Berlin's winter hour gives Monday 00:00 in
-- winter and 01:00 in summer.  With tz the grid is laid on the local
-- clock, and '4 days' gives local Mondays 00:00 all year: the weeks in
-- which clocks change last 167 and 169 hours.
SET TimeZone = 'Europe/Berlin';
SELECT ts, to_char(ts, 'Dy') AS day,
       windowing.tumble_start(ts, '7 days', '3 days 23 hours') AS fixed_offset,
       w.window_start, w.window_end, w.window_end - w.window_start AS length,
       to_char(w.window_start, 'Dy HH24:MI') AS local_start
FROM unnest(ARRAY['2026-01-14 12:00', '2026-03-22 23:59:59.999999', '2026-03-23 00:00',
                  '2026-03-29 01:59:59.999999+01', '2026-03-29 03:00+02', '2026-03-30 00:00',
                  '2026-07-15 12:00', '2026-10-25 02:30+02', '2026-10-25 02:30+01',
                  '2026-10-26 00:00', '2026-11-30 00:00']::timestamptz[]) ts,
     windowing.tumble(ts, '7 days', '4 days', tz => 'Europe/Berlin') w;
SELECT windowing.tumble_start('2026-10-21 12:00', '7 days', '4 days', 'Europe/Berlin') AS week_start;

-- The same weeks in a pipeline: windowing.tumbling('7 days', '4 days')
-- for UTC weeks, with tz => 'Europe/Berlin' for Berlin's
CREATE TABLE week_events (ts timestamptz);
SELECT windowing.create_pipeline('utc_weeks', 'week_events', 'ts',
    assigner => windowing.tumbling('7 days', '4 days'), start => false, retention => 'keep');
SELECT windowing.create_pipeline('berlin_weeks', 'week_events', 'ts',
    assigner => windowing.tumbling('7 days', '4 days', tz => 'Europe/Berlin'), start => false);
INSERT INTO week_events
SELECT unnest(ARRAY['2026-03-22 23:30', '2026-03-23 00:30', '2026-03-29 01:30', '2026-03-29 03:30',
                    '2026-03-30 00:30', '2026-10-25 02:30+02', '2026-10-25 02:30+01',
                    '2026-10-26 00:30', '2026-11-29 23:30', '2026-11-30 00:30']::timestamptz[]);
SELECT windowing.process(p), windowing.flush(p) FROM unnest(ARRAY['utc_weeks', 'berlin_weeks']) p;
SELECT window_start, window_end, window_end - window_start AS length, count,
       to_char(window_start, 'Dy HH24:MI') AS local_start
FROM berlin_weeks_results ORDER BY window_start;
SET TimeZone = 'UTC';
SELECT window_start, window_end, window_end - window_start AS length, count,
       to_char(window_start, 'Dy HH24:MI') AS utc_start
FROM utc_weeks_results ORDER BY window_start;
SELECT windowing.drop_pipeline(p, drop_tables => true) FROM unnest(ARRAY['utc_weeks', 'berlin_weeks']) p;
DROP TABLE week_events;
