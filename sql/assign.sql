-- Tumbling, sliding and cumulating windows on fixed lengths.
SET timezone = 'Asia/Shanghai';
SET datestyle = ISO;

-- Seed 000 §0: six orders in Beijing time, counted per day.
CREATE TABLE orders (ts timestamptz, amount int);
INSERT INTO orders VALUES
  ('2026-10-01 00:30', 10), ('2026-10-01 07:59', 20), ('2026-10-01 08:00', 30),
  ('2026-10-01 12:00', 40), ('2026-10-01 23:30', 50), ('2026-10-02 07:30', 60);

-- Without an offset, days are UTC days: they start at 08:00 Beijing time.
SELECT w.window_start, w.window_end, count(*),
       extract(epoch FROM w.window_start)::bigint * 1000 AS start_ms
FROM orders, windowing.tumble(ts, '1 day') w
GROUP BY 1, 2 ORDER BY 1;

-- Flink's fix: an offset of -8 hours (positional, "offset" is reserved).
SELECT w.window_start, w.window_end, count(*), sum(amount),
       extract(epoch FROM w.window_start)::bigint * 1000 AS start_ms
FROM orders, windowing.tumble(ts, '1 day', '-8 hours') w
GROUP BY 1, 2 ORDER BY 1;

-- The same by name, and through the scalar form.
SELECT windowing.tumble_start(ts, '1 day', "offset" => '-8 hours') AS day, count(*)
FROM orders GROUP BY 1 ORDER BY 1;

-- Seed 000 exercise 1: 12-hour windows without an offset.
SELECT w.window_start, count(*) FROM orders, windowing.tumble(ts, '12 hours') w
GROUP BY 1 ORDER BY 1;

SET timezone = 'UTC';

-- window_time is the max timestamp: end - 1 microsecond, end - 1 for bigint.
SELECT * FROM windowing.tumble('2026-01-01 10:17:00+00'::timestamptz, '15 minutes');
SELECT * FROM windowing.tumble(1017::bigint, 100);

-- Epoch milliseconds, like Flink: seed 002's timestamp in 5 ms windows.
SELECT * FROM windowing.tumble(1640697324792, 5);
SELECT windowing.tumble_start(1640697324792, 5);

-- Negative times (before 1970) round down, never toward zero.
SELECT * FROM windowing.tumble(-1::bigint, 5);
SELECT * FROM windowing.tumble(-5::bigint, 5);
SELECT * FROM windowing.tumble(-6::bigint, 5);
SELECT * FROM windowing.tumble('1969-12-31 23:59:59.5+00'::timestamptz, '1 second');
SELECT * FROM windowing.tumble('1900-03-01 10:00+00'::timestamptz, '7 days');

-- Windows align to 1970-01-01 (a Thursday), not to PostgreSQL's 2000 epoch.
SELECT * FROM windowing.tumble('2026-11-29 12:00+00'::timestamptz, '7 days');

-- Offsets shift the grid both ways.
SELECT * FROM windowing.tumble(12::bigint, 10, 3);
SELECT * FROM windowing.tumble(12::bigint, 10, -3);
SELECT * FROM windowing.tumble(2::bigint, 10, 3);

-- Seed 002: size 5, slide 2 at ts = 1640697324792.  Flink's code aligns the
-- newest start to the slide (getWindowStartWithOffset(ts, offset, slide)),
-- which gives 792, 790, 788.  The seed's table (790, 788, 786) aligned it to
-- the size instead: its last window [786, 791) does not contain the row.
SELECT * FROM windowing.hop(1640697324792, 5, 2);
SELECT bool_and(1640697324792 >= window_start AND 1640697324792 < window_end) AS all_contain_ts,
       count(*) AS windows
FROM windowing.hop(1640697324792, 5, 2);

-- Size not a multiple of slide: 2 or 3 windows depending on the row.
SELECT ts, array_agg(w.window_start ORDER BY w.window_start) AS starts
FROM generate_series(0, 6) ts, windowing.hop(ts::bigint, 7, 3) w
GROUP BY ts ORDER BY ts;

-- Size smaller than slide: some rows fall between windows and get none.
SELECT ts, count(w.window_start) AS windows
FROM generate_series(0, 5) ts
LEFT JOIN LATERAL windowing.hop(ts::bigint, 2, 3) w ON true
GROUP BY ts ORDER BY ts;

-- hop with an offset and negative times.
SELECT * FROM windowing.hop(-1::bigint, 10, 5, 1);

-- timestamptz hop: one hour windows every 20 minutes.
SELECT * FROM windowing.hop('2026-01-01 10:17+00'::timestamptz, '1 hour', '20 minutes');

-- hop in the target list works too.
SELECT (windowing.hop(7::bigint, 4, 2)).*;

-- hop_start streams the starts from the select list (the fast GROUP BY form).
SELECT windowing.hop_start(1640697324792, 5, 2);
SELECT windowing.hop_start('2026-01-01 10:17+00'::timestamptz, '1 hour', '20 minutes');
SELECT s, count(*) FROM (SELECT windowing.hop_start(ts::bigint, 30, 20) AS s
                         FROM generate_series(0, 99) ts) x GROUP BY s ORDER BY s;
-- A set abandoned half-way (LIMIT in a rescanned subquery) is not resumed
-- for the next row.
SELECT t, (SELECT array_agg(s) FROM (SELECT windowing.hop_start(t::bigint * 100, 10, 2) s LIMIT 2) x)
FROM generate_series(1, 3) t;

-- cumulate: day-long windows growing by 6 hours (Flink SQL CUMULATE).
SELECT * FROM windowing.cumulate('2026-01-01 13:00+00'::timestamptz, '6 hours', '1 day');
SELECT * FROM windowing.cumulate(13::bigint, 5, 20);
SELECT * FROM windowing.cumulate(-1::bigint, 5, 20);
SELECT * FROM windowing.cumulate(13::bigint, 5, 20, 4);

-- A GROUP BY over hop windows counts each row once per window.
CREATE TABLE clicks AS
  SELECT i::bigint AS ts FROM generate_series(0, 99) i;
SELECT w.window_start, w.window_end, count(*)
FROM clicks, windowing.hop(ts, 30, 20) w
GROUP BY 1, 2 ORDER BY 1;

-- NULL in, NULL (or no rows) out.
SELECT windowing.tumble(NULL::timestamptz, '1 day') IS NULL AS null_ts;
SELECT windowing.tumble(now(), NULL) IS NULL AS null_size;
SELECT windowing.tumble_start(NULL::bigint, 10) IS NULL AS null_bigint;
SELECT count(*) FROM windowing.hop(NULL::timestamptz, '1 hour', '10 minutes');
SELECT count(*) FROM windowing.cumulate(now(), NULL, '1 day');

-- Near the ends of bigint, windows that fit are exact.
SELECT * FROM windowing.tumble(9223372036854775790, 10);
SELECT * FROM windowing.tumble(-9223372036854775808, 10, 2);

DROP TABLE orders, clicks;
