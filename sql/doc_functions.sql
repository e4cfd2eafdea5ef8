-- The SQL examples of doc/functions.md, as the page shows them: test/doc_examples.sh
-- checks that every example of the docs appears verbatim in a file here.
-- Its own schema keeps its tables apart from the other tests'.
CREATE SCHEMA doc_functions;
SET search_path = doc_functions, public;

CREATE TABLE orders (ts timestamptz, amount numeric);
INSERT INTO orders VALUES
  ('2026-10-01 00:30+08', 10), ('2026-10-01 07:59+08', 20), ('2026-10-01 08:00+08', 30),
  ('2026-10-15 12:00+08', 40), ('2026-11-02 07:30+08', 60);

CREATE TABLE clicks (user_id int, ts timestamptz);
INSERT INTO clicks VALUES
  (1, '2026-10-01 12:00+00'), (1, '2026-10-01 12:07+00'), (1, '2026-10-01 12:31+00'),
  (1, '2026-10-01 13:30+00'), (2, '2026-10-01 12:02+00'), (2, '2026-10-01 12:44+00');

CREATE TABLE readings (sensor int, seq bigint, v float8);
INSERT INTO readings SELECT s, i, i * s FROM generate_series(1, 2) s, generate_series(1, 25) i;

-- orders per local day in Beijing
SELECT w.window_start, count(*), sum(amount)
FROM orders, windowing.tumble(ts, '1 day', tz => 'Asia/Shanghai') w
GROUP BY 1 ORDER BY 1;

-- the fast scalar form
SELECT windowing.tumble_start(ts, '5 minutes') AS minute, count(*)
FROM clicks GROUP BY 1 ORDER BY 1;

-- last hour, every 10 minutes
SELECT w.window_start, w.window_end, count(*)
FROM clicks, windowing.hop(ts, '1 hour', '10 minutes') w
GROUP BY 1, 2 ORDER BY 1;

-- the same windows' starts, in the select list (faster)
SELECT windowing.hop_start(ts, '1 hour', '10 minutes') AS window_start, count(*)
FROM clicks GROUP BY 1 ORDER BY 1;

-- month to date, day by day, on the local calendar (October's first days)
SELECT w.window_start, w.window_end, sum(amount)
FROM orders, windowing.cumulate(ts, '1 day', '1 month', tz => 'Europe/Berlin') w
WHERE w.window_end <= '2026-10-04 00:00 Europe/Berlin'
GROUP BY 1, 2 ORDER BY 1, 2;

-- sessions with a 30-minute gap, per user
SELECT user_id, (s).window_start, (s).window_end, count(*)
FROM (SELECT user_id, windowing.session(ts, '30 minutes')
             OVER (PARTITION BY user_id ORDER BY ts) AS s FROM clicks) x
GROUP BY 1, 2, 3 ORDER BY 1, 2;

SELECT user_id, windowing.sessions(ts, '30 minutes')
FROM clicks GROUP BY user_id ORDER BY user_id;

-- Flink's countWindow(10, 5) per sensor, fired windows only
SELECT sensor, k, count(*), avg(v)
FROM (SELECT sensor, v, unnest(windowing.count_window(10, 5)
             OVER (PARTITION BY sensor ORDER BY seq)) AS k FROM readings) x
GROUP BY 1, 2
HAVING k * 5 <= (SELECT count(*) FROM readings r WHERE r.sensor = x.sensor)
ORDER BY 1, 2;

-- local time: a month and a week from Monday of a timestamp
SELECT windowing.tumble_start(timestamp '2026-10-25 02:30', '1 month') AS month,
       windowing.tumble_start(timestamp '2026-10-25 02:30', '7 days', '4 days') AS monday;

-- weeks from Monday 00:00, in UTC and on Berlin's clocks
SELECT ts AT TIME ZONE 'UTC' AS utc_time,
       windowing.tumble_start(ts, '7 days') AT TIME ZONE 'UTC' AS thursday,
       windowing.tumble_start(ts, '7 days', '4 days') AT TIME ZONE 'UTC' AS utc_monday,
       windowing.tumble_start(ts, '7 days', '4 days', 'Europe/Berlin')
         AT TIME ZONE 'Europe/Berlin' AS berlin_monday
FROM unnest(ARRAY['2026-12-02 12:00+00', '2026-03-29 12:00+00',
                  '2026-10-25 23:30+00']::timestamptz[]) ts;

RESET search_path;
DROP SCHEMA doc_functions CASCADE;
