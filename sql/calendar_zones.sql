-- Day, month and year windows in every zone of the tz database, checked
-- around each change of its UTC offset from 1970 to 2037: a window is the
-- whole local day (month, year), from the first instant the local clock
-- reaches its start to the first instant it reaches the next one's, as
-- java.time's atStartOfDay gives a day.  The expected windows are worked
-- out here from the offsets PostgreSQL reports, not from date_trunc('day',
-- ts, zone): that puts a repeated local midnight at its later instant
-- (see calendar.sql).
SET timezone = 'UTC';
SET datestyle = ISO;
SET jit = off;
SET temp_buffers = '256MB';

-- The zone's offset east of UTC at an instant.
CREATE FUNCTION pg_temp.off(t timestamptz, zone text) RETURNS interval
LANGUAGE sql IMMUTABLE AS $$ SELECT (t AT TIME ZONE zone) - (t AT TIME ZONE 'UTC') $$;

-- Every change of offset, found month by month, then to the second by
-- bisection (two changes within a month that cancel out go unseen): n,
-- with the offsets b before and a after it.
CREATE TEMP TABLE changes AS
WITH RECURSIVE
months AS (
  SELECT name, m, pg_temp.off(m, name) AS off
  FROM pg_timezone_names, generate_series('1970-01-01'::timestamptz, '2037-12-01', '1 month') m
  WHERE pg_temp.off(m, name) <> pg_temp.off(m + interval '1 month', name)),
search(name, lo, hi, before) AS (
  SELECT name, extract(epoch FROM m)::bigint, extract(epoch FROM m + interval '1 month')::bigint, off
  FROM months
  UNION ALL
  SELECT name, CASE WHEN same THEN mid ELSE lo END, CASE WHEN same THEN hi ELSE mid END, before
  FROM (SELECT name, lo, hi, before, (lo + hi) / 2 AS mid,
               pg_temp.off(to_timestamp((lo + hi) / 2), name) = before AS same
        FROM search WHERE hi - lo > 1 OFFSET 0) s)
SELECT name, to_timestamp(hi) AS n, pg_temp.off(to_timestamp(hi - 1), name) AS b,
       pg_temp.off(to_timestamp(hi), name) AS a
FROM search WHERE hi - lo = 1;
SELECT count(*) > 20000 AS many_changes, count(DISTINCT name) > 400 AS many_zones,
       count(*) FILTER (WHERE a < b) > 10000 AS many_fall_backs,
       count(*) FILTER (WHERE a < b AND (n AT TIME ZONE name)::time < b - a) > 100 AS many_back_across_midnight
FROM changes;

-- The first instant the local clock shows m or later, near change n: m read
-- with the offset before n if that instant is before n, else with the
-- offset after it, or n itself where the change skips m.
-- (The session's time zone is UTC: a timestamp cast to timestamptz is read
-- as UTC.)
CREATE FUNCTION pg_temp.first_instant(m timestamp, n timestamptz, b interval, a interval)
RETURNS timestamptz LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN (m - b)::timestamptz < n THEN (m - b)::timestamptz
              ELSE greatest(n, (m - a)::timestamptz) END $$;

-- Instants near each change: at it and just before, in the middle of the
-- time it repeats or skips and of the time before, and at and just before
-- the first instants of the local day it happens on and of the next.
CREATE TEMP TABLE samples AS
SELECT c.*, s.ts, (s.ts AT TIME ZONE c.name)::date AS d FROM changes c, LATERAL (
  SELECT c.n + k * (c.b - c.a) / 2 FROM generate_series(-1, 1) k
  UNION SELECT c.n - interval '1 microsecond'
  UNION SELECT pg_temp.first_instant(((c.n AT TIME ZONE c.name)::date + e)::timestamp, c.n, c.b, c.a) + f
  FROM generate_series(0, 1) e, unnest(ARRAY[interval '-1 microsecond', interval '0']) f) s(ts);

-- The first instants of the local days around each sample: f[2] is that of
-- its local date d.  Its day is the one whose first instant is the latest at
-- or before it: its own date, or the next one in the times a fall-back
-- across midnight repeats (i = 1).
CREATE TEMP TABLE days AS
SELECT name, ts, f, (f[3] <= ts)::int AS i
FROM (SELECT s.name, s.ts,
             ARRAY[pg_temp.first_instant((d - 1)::timestamp, s.n, s.b, s.a),
                   pg_temp.first_instant(d::timestamp, s.n, s.b, s.a),
                   pg_temp.first_instant((d + 1)::timestamp, s.n, s.b, s.a),
                   pg_temp.first_instant((d + 2)::timestamp, s.n, s.b, s.a),
                   pg_temp.first_instant((d + 3)::timestamp, s.n, s.b, s.a)] AS f
      FROM samples s) x;

-- tumble by day in every sample: mismatches, and a few of them to read
SELECT count(*) > 150000 AS many_samples,
       count(*) FILTER (WHERE w.window_start <> d.f[2 + i] OR w.window_end <> d.f[3 + i]) AS mismatches,
       (array_agg(format('%s at %s: [%s, %s), not [%s, %s)', d.name, d.ts, w.window_start, w.window_end,
                         d.f[2 + i], d.f[3 + i]) ORDER BY d.name, d.ts)
        FILTER (WHERE w.window_start <> d.f[2 + i] OR w.window_end <> d.f[3 + i]))[1:5] AS examples
FROM days d, windowing.tumble(d.ts, '1 day', tz => d.name) w;

-- hop by two days sliding by one: the same days, two at a time, counted on
-- the local clock (a day that a zone skips, as Pacific/Kwajalein skipped
-- 1993-08-21, is one of them)
SELECT count(*) FILTER (WHERE NOT (older OR newer)) AS mismatches,
       count(*) FILTER (WHERE older) = (SELECT count(*) FROM days) AND
       count(*) FILTER (WHERE newer) = (SELECT count(*) FROM days) AS both_in_every_sample,
       (array_agg(format('%s at %s: [%s, %s)', name, ts, window_start, window_end) ORDER BY name, ts)
        FILTER (WHERE NOT (older OR newer)))[1:5] AS examples
FROM (SELECT d.name, d.ts, w.window_start, w.window_end,
             (w.window_start, w.window_end) = (d.f[1 + i], d.f[3 + i]) AS older,
             (w.window_start, w.window_end) = (d.f[2 + i], d.f[4 + i]) AS newer
      FROM days d, windowing.hop(d.ts, '2 days', '1 day', tz => d.name) w) h;

-- Months and years: where a change is within three days of the first of a
-- month (of a year), the samples around it lie in the month that starts
-- there or in the one that ends there.
WITH near AS MATERIALIZED (
  SELECT u.unit, s.name, s.ts, pg_temp.first_instant(m.m, s.n, s.b, s.a) AS first
  FROM samples s, unnest(ARRAY['month', 'year']) u(unit),
  LATERAL (SELECT date_trunc(u.unit, (s.n AT TIME ZONE s.name) + interval '3 days') AS m) m
  WHERE m.m >= (s.n AT TIME ZONE s.name) - interval '3 days')
SELECT unit, count(*) > 400 AS many_samples,
       count(*) FILTER (WHERE bad) AS mismatches,
       (array_agg(format('%s at %s: [%s, %s), boundary %s', name, ts, window_start, window_end, first)
                  ORDER BY name, ts) FILTER (WHERE bad))[1:5] AS examples
FROM (SELECT n.*, w.*,
             CASE WHEN n.ts >= n.first THEN w.window_start <> n.first ELSE w.window_end <> n.first END AS bad
      FROM near n, windowing.tumble(n.ts, ('1 ' || n.unit)::interval, tz => n.name) w) c
GROUP BY unit ORDER BY unit;
