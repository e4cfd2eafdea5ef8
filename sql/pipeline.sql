-- Pipelines driven step by step with process(), advance_watermark() and
-- flush().  start => false keeps the background worker away, so every
-- result here comes from the calls in this file.
SET datestyle = ISO;
\set SHOW_CONTEXT never
SET timezone = 'UTC';

-- Seed 000 §4.2: 5 s tumbling windows, 2 s out-of-orderness, events at
-- 1, 2, 4, 6, 3, 8, 2, 11, 1, 13 s, allowed lateness 3 s, append mode.
CREATE TABLE clicks (sec int, ts timestamptz);
-- windowing.collect keeps every input of a window (Flink's ListState).
SELECT windowing.create_pipeline('late3', 'clicks', 'ts',
    assigner => windowing.tumbling('5 seconds'),
    aggregates => 'count(*) AS n, sum(sec) AS secs, windowing.collect(sec) AS elements',
    max_out_of_orderness => '2 seconds', allowed_lateness => '3 seconds',
    emit => 'append', start => false, retention => 'consume');
INSERT INTO clicks SELECT s, '2026-01-01'::timestamptz + s * interval '1 second'
FROM unnest(ARRAY[1, 2, 4, 6, 3, 8, 2, 11, 1, 13]) s;
SELECT windowing.process('late3');
-- [0,5) fired with 4 rows, then again with 5 when the late 2 s arrived,
-- and ended its life at watermark 10.999999 s (past 4.999999 s + 3 s): a
-- row of its own, final, repeats its last result; [5,10) fired with 2;
-- [10,15) waits for more time.
SELECT window_start, window_end, window_time, n, secs, elements, fire_count, is_final
FROM late3_results ORDER BY window_end, fire_count, is_final;
-- The second 1 s came after [0,5) was cleaned up (watermark 8.999999 s).
SELECT event_time, watermark, reason, missed_windows, row_data FROM late3_late;
SELECT windowing.flush('late3');
-- flush() fires [10,15), then ends its life
SELECT window_start, n, secs, elements, fire_count, is_final FROM late3_results
WHERE window_start = '2026-01-01 00:00:10+00' ORDER BY is_final;
SELECT name, state, watermark, rows_consumed, windows_fired, late_routed, late_dropped
FROM windowing.pipeline_stats WHERE name = 'late3';

-- The same stream with allowed lateness 0: 2 s and 1 s are late.
SELECT windowing.create_pipeline('late0', 'clicks', 'ts',
    assigner => windowing.tumbling('5 seconds'),
    aggregates => 'count(*) AS n, sum(sec) AS secs',
    max_out_of_orderness => '2 seconds', emit => 'append', start => false, retention => 'consume');
SELECT windowing.process('late0');
SELECT windowing.flush('late0');
SELECT window_start, window_end, n, secs, fire_count, is_final
FROM late0_results ORDER BY window_end, fire_count;
SELECT event_time, watermark, reason FROM late0_late ORDER BY routed_at, event_time DESC;

-- upsert keeps one row per window with the latest result; with lateness,
-- is_final turns true when the watermark passes the cleanup time.
SELECT windowing.create_pipeline('upsert3', 'clicks', 'ts',
    assigner => windowing.tumbling('5 seconds'), aggregates => 'count(*) AS n',
    max_out_of_orderness => '2 seconds', allowed_lateness => '3 seconds',
    start => false, retention => 'consume');
SELECT windowing.process('upsert3', 4);
SELECT count(*) FROM upsert3_results;
SELECT windowing.process('upsert3');
SELECT window_start, n, fire_count, is_final FROM upsert3_results ORDER BY window_start;
SELECT windowing.flush('upsert3');
SELECT window_start, n, fire_count, is_final FROM upsert3_results ORDER BY window_start;

-- Results do not depend on batch size: steps of 1, 7 and 10000 rows.
CREATE TABLE stream (k int, ts bigint, v int);
INSERT INTO stream
  SELECT i % 3, (i * 7919) % 1000 + i * 10, i FROM generate_series(1, 300) i;
SELECT windowing.create_pipeline('b' || n, 'stream', 'ts', '{k}',
    windowing.hopping('200 milliseconds', '100 milliseconds'),
    'count(*) AS n, sum(v) AS total, min(v), max(v), avg(v)',
    max_out_of_orderness => '300 milliseconds', allowed_lateness => '100 milliseconds',
    emit => 'append', start => false, retention => 'consume')
FROM unnest(ARRAY[1, 7, 10000]) n;
DO $$
BEGIN
    WHILE windowing.process('b1', 1) > 0 LOOP END LOOP;
    WHILE windowing.process('b7', 7) > 0 LOOP END LOOP;
    PERFORM windowing.process('b10000', 10000);
END $$;
SELECT count(*) FILTER (WHERE NOT is_final) AS firings,
       sum(n) FILTER (WHERE NOT is_final) AS rows_in_firings,
       sum(total) FILTER (WHERE NOT is_final) AS total,
       count(*) FILTER (WHERE is_final) AS ended
FROM b1_results;
-- a window's end of life is one row, the same as its last firing
SELECT count(*) AS final_rows_off FROM b1_results f
WHERE f.is_final AND (
    (SELECT count(*) FROM b1_results o WHERE o.k = f.k AND o.window_start = f.window_start
       AND o.is_final) <> 1
    OR NOT EXISTS (SELECT FROM b1_results x WHERE x.k = f.k AND x.window_start = f.window_start
       AND NOT x.is_final AND x.fire_count = f.fire_count AND x.n = f.n
       AND x.total = f.total AND x.fire_count = (SELECT max(fire_count) FROM b1_results y
                                                  WHERE y.k = f.k AND y.window_start = f.window_start)));
-- a step that ended exactly at the end of its tick leaves the tick to the
-- next one, which must close it and go on with new rows
INSERT INTO stream VALUES (0, 5000, 0);
SELECT windowing.process('b1', 1) AS b1, windowing.process('b7', 7) AS b7,
       windowing.process('b10000', 10000) AS b10000;
SELECT windowing.process('b1', 1) AS b1, windowing.process('b7', 7) AS b7,
       windowing.process('b10000', 10000) AS b10000;
SELECT (SELECT count(*) FROM b1_late) AS late1, (SELECT count(*) FROM b7_late) AS late7,
       (SELECT count(*) FROM b10000_late) AS late10000;
SELECT count(*) AS differences FROM (
  (SELECT k, window_start, window_end, n, total, min, max, avg, fire_count, is_final FROM b1_results
   EXCEPT ALL
   SELECT k, window_start, window_end, n, total, min, max, avg, fire_count, is_final FROM b7_results)
  UNION ALL
  (SELECT k, window_start, window_end, n, total, min, max, avg, fire_count, is_final FROM b7_results
   EXCEPT ALL
   SELECT k, window_start, window_end, n, total, min, max, avg, fire_count, is_final FROM b10000_results)) d;
SELECT count(*) AS differences FROM (
  SELECT event_time, watermark, reason, missed_windows, row_data FROM b1_late
  EXCEPT ALL SELECT event_time, watermark, reason, missed_windows, row_data FROM b10000_late) d;
-- The results equal a recomputation with the SQL functions (no row is late
-- for all its windows here; rows late for some record them).
SELECT count(*) AS windows_off FROM (
  SELECT r.k, r.window_start, r.n, r.total FROM b1_results r
  WHERE r.fire_count = (SELECT max(fire_count) FROM b1_results x
                        WHERE x.k = r.k AND x.window_start = r.window_start)
  EXCEPT
  SELECT s.k, w.window_start, count(*), sum(s.v) FROM stream s, windowing.hop(s.ts, 200, 100) w
  WHERE NOT EXISTS (SELECT 1 FROM b1_late l, unnest(l.missed_windows) m
                    WHERE (l.row_data->>'v')::int = s.v AND m.window_start = w.window_start)
  GROUP BY 1, 2) d;

-- Partial lateness: a sliding row on time for its newest window but late
-- for an older one is added to the live window, and the missed one is
-- recorded (Flink drops that silently).
CREATE TABLE hops (ts bigint);
SELECT windowing.create_pipeline('partial', 'hops', 'ts',
    assigner => windowing.hopping('10 milliseconds', '5 milliseconds'),
    start => false, retention => 'consume');
INSERT INTO hops VALUES (3), (12), (9);
SELECT windowing.process('partial');
SELECT window_start, window_end, count, fire_count FROM partial_results ORDER BY window_end, window_start;
SELECT event_time, watermark, reason, missed_windows FROM partial_late;
SELECT windowing.flush('partial');
SELECT window_start, window_end, count, fire_count FROM partial_results ORDER BY window_end, window_start;

-- Cumulating windows, and an explicit watermark only (NULL out-of-orderness).
CREATE TABLE sales (shop text, ts timestamptz, amount numeric);
SELECT windowing.create_pipeline('daily', 'sales', 'ts', '{shop}',
    windowing.cumulating('6 hours', '1 day'), 'sum(amount) AS revenue, count(*) AS orders',
    max_out_of_orderness => NULL, start => false, retention => 'consume');
INSERT INTO sales VALUES ('a', '2026-03-01 01:00+00', 10), ('b', '2026-03-01 02:00+00', 5),
                         ('a', '2026-03-01 07:00+00', 20), ('a', '2026-03-01 13:00+00', 1.5);
SELECT windowing.process('daily');
SELECT count(*) FROM daily_results;
-- nothing fired yet: open_windows shows what each window would say now
SELECT * FROM windowing.open_windows('daily') ORDER BY key->>'shop', window_end;
SELECT windowing.advance_watermark('daily', '2026-03-01 12:00+00');
SELECT shop, window_start, window_end, revenue, orders FROM daily_results ORDER BY window_end, shop;
SELECT windowing.advance_watermark('daily', '2026-03-01 11:00+00');
SELECT windowing.flush('daily');
SELECT shop, window_end, revenue, orders, fire_count, is_final FROM daily_results ORDER BY window_end, shop;

-- Two pipelines on one queue each see every row once; a row committed
-- later lands in the next step.
CREATE TABLE q (ts bigint);
SELECT windowing.create_pipeline('q1', 'q', 'ts', assigner => windowing.tumbling('10 milliseconds'), start => false, retention => 'consume');
INSERT INTO q SELECT generate_series(0, 49);
SELECT windowing.create_pipeline('q2', 'q', 'ts', assigner => windowing.tumbling('25 milliseconds'), start => false, retention => 'consume');
SELECT windowing.process('q1'), windowing.process('q2');
INSERT INTO q SELECT generate_series(50, 59);
SELECT windowing.process('q1'), windowing.process('q2'), windowing.process('q1');
SELECT windowing.flush('q1'), windowing.flush('q2');
SELECT 'q1' AS p, window_start, count FROM q1_results UNION ALL
SELECT 'q2', window_start, count FROM q2_results ORDER BY 1, 2;

-- NULL event times go to the late table with their reason.
INSERT INTO clicks VALUES (99, NULL);
SELECT windowing.process('late0');
SELECT event_time, reason, row_data FROM late0_late WHERE event_time IS NULL;

SELECT name, state, source, key_columns, emit, channel FROM windowing.pipelines ORDER BY name;
SELECT windowing.pause_pipeline('q1');
SELECT windowing.resume_pipeline('q1');
SELECT name, state FROM windowing.pipelines WHERE name = 'q1';
SELECT windowing.drop_pipeline(name, drop_tables => true) FROM windowing.pipelines;
SELECT count(*) FROM windowing.pipeline;
SELECT count(*) FROM windowing.window_state;
DROP TABLE clicks, stream, hops, sales, q;
