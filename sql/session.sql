-- Session windows: session() per row and sessions() per group.
SET datestyle = ISO;

-- Seed 000 §5.3: gap 3 s, events at 1, 2, 10, 7, 20 s in that arrival order
-- give [1,5), [7,13), [20,23): 10 and the late 7 touch at 10 and merge.
CREATE TABLE events (key text, seq int, ts bigint);
INSERT INTO events VALUES ('a', 1, 1000), ('a', 2, 2000), ('a', 3, 10000),
                          ('a', 4, 7000), ('a', 5, 20000);

SELECT seq, ts, windowing.session(ts, 3000) OVER (PARTITION BY key ORDER BY ts)
FROM events ORDER BY seq;

-- Arrival order (not time order) gives the same sessions.
SELECT seq, ts, windowing.session(ts, 3000) OVER (PARTITION BY key ORDER BY seq)
FROM events ORDER BY seq;

SELECT key, windowing.sessions(ts, 3000) FROM events GROUP BY key;
SELECT key, windowing.sessions(ts, 3000 ORDER BY seq DESC) FROM events GROUP BY key;
SELECT s.* FROM (SELECT windowing.sessions(ts, 3000) AS ss FROM events) x, unnest(x.ss) s;

-- Touching windows merge; a gap of one unit more does not.
SELECT windowing.sessions(ts, 5) FROM unnest(ARRAY[0, 5, 10]::bigint[]) ts;
SELECT windowing.sessions(ts, 5) FROM unnest(ARRAY[0, 6, 12]::bigint[]) ts;

-- A late row bridges two sessions into one.
SELECT windowing.sessions(ts, 3) FROM unnest(ARRAY[1, 10]::bigint[]) ts;
SELECT windowing.sessions(ts, 3) FROM unnest(ARRAY[1, 10, 4, 7]::bigint[]) ts;

-- Keys are separate.
INSERT INTO events VALUES ('b', 6, 1500), ('b', 7, 4600), ('b', 8, 30000);
SELECT key, seq, ts, (windowing.session(ts, 3000) OVER w).*
FROM events WINDOW w AS (PARTITION BY key ORDER BY ts) ORDER BY key, ts;

-- Dynamic gap: each row carries its own gap.
CREATE TABLE visits (who text, ts timestamptz, gap interval);
INSERT INTO visits VALUES
  ('ann', '2026-05-01 10:00+00', '10 minutes'),
  ('ann', '2026-05-01 10:05+00', '30 minutes'),
  ('ann', '2026-05-01 10:40+00', '10 minutes'),
  ('ann', '2026-05-01 10:55+00', '5 minutes'),
  ('bob', '2026-05-01 10:00+00', '1 minute'),
  ('bob', '2026-05-01 10:01+00', '1 minute'),
  ('bob', '2026-05-01 10:03+00', '1 minute');
SET timezone = 'UTC';
SELECT who, ts, gap, (windowing.session(ts, gap) OVER (PARTITION BY who ORDER BY ts)).*
FROM visits ORDER BY who, ts;
SELECT who, s.window_start, s.window_end
FROM (SELECT who, windowing.sessions(ts, gap) AS ss FROM visits GROUP BY who) x, unnest(x.ss) s
ORDER BY who, s.window_start;

-- The usual GROUP BY session: count rows per session.
SELECT who, (w).window_start, (w).window_end, count(*)
FROM (SELECT who, windowing.session(ts, '10 minutes') OVER (PARTITION BY who ORDER BY ts) AS w
      FROM visits) x
GROUP BY 1, 2, 3 ORDER BY 1, 2;

-- NULL times and gaps belong to no session.
SELECT ts, windowing.session(ts, 2) OVER (ORDER BY ts)
FROM unnest(ARRAY[1, NULL, 2]::bigint[]) ts ORDER BY ts;
SELECT windowing.sessions(ts, g)
FROM (VALUES (1::bigint, 2::bigint), (NULL, 2), (5, NULL), (3, 2)) v(ts, g);
SELECT windowing.sessions(ts, 2) FROM unnest(ARRAY[]::bigint[]) ts;

-- Negative times.
SELECT windowing.sessions(ts, 10) FROM unnest(ARRAY[-100, -95, -80, -71]::bigint[]) ts;

-- Many rows: sessions() compacts its buffer as it goes and still merges
-- exactly (every sixth row jumps 2 further, so sessions hold 6 rows).
SELECT count(*) AS sessions, min((s).window_end - (s).window_start) AS shortest,
       max((s).window_end - (s).window_start) AS longest
FROM (SELECT unnest(windowing.sessions(ts, 2)) AS s
      FROM generate_series(1, 100000) i, LATERAL (SELECT (i + i / 6 * 2)::bigint AS ts) t) x;

-- Parallel aggregation combines partial sessions into the same answer.
CREATE TABLE many AS
  SELECT (i % 10) AS key, (i / 10 * 3 + (i / 1000) * 5)::bigint AS ts
  FROM generate_series(0, 199999) i;
ANALYZE many;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF)
SELECT key, windowing.sessions(ts, 3) FROM many GROUP BY key;
SELECT key, cardinality(windowing.sessions(ts, 3)) AS n,
       (windowing.sessions(ts, 3))[1] AS first
FROM many GROUP BY key ORDER BY key;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
SELECT key, cardinality(windowing.sessions(ts, 3)) AS n,
       (windowing.sessions(ts, 3))[1] AS first
FROM many GROUP BY key ORDER BY key;

RESET timezone;
DROP TABLE events, visits, many;
