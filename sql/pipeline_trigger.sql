-- Early firing: trigger => 'early every <interval>' (Flink's
-- ContinuousEventTimeTrigger): a window fires each time the watermark
-- passes a multiple of the interval, counted from its first row's time,
-- then on time, then late; each result row says which pane it was.
SET TimeZone = 'UTC';
CREATE TABLE clicks (k text, ts timestamptz, v int);
SELECT windowing.create_pipeline(name, 'clicks', 'ts', '{k}', windowing.tumbling('1 minute'),
    'count(*) AS n, sum(v) AS total', emit => e, start => false, retention => 'consume',
    trigger => 'early every 10 seconds')
FROM (VALUES ('up', 'upsert'), ('ap', 'append')) p(name, e);
SELECT name, trigger FROM windowing.pipelines ORDER BY name;
\d up_results

-- the first row at :05 sets the first early timer at :10; the row at :12
-- moves the watermark past it: the window fires early with both rows
INSERT INTO clicks VALUES ('a', '2026-01-01 00:00:05', 1), ('a', '2026-01-01 00:00:12', 2);
SELECT windowing.process(name) FROM unnest(ARRAY['up', 'ap']) name;
SELECT k, window_start, n, total, fire_count, is_final, pane FROM up_results ORDER BY 1, 2;
-- fired early, the window is open until the watermark reaches its end
SELECT key, window_start, results FROM windowing.open_windows('up');
-- the row at :35 comes before the watermark passes :20 and :30: the
-- window fires at :20 with it; at :30 nothing came since, and a firing
-- would repeat the same result, so none is made
INSERT INTO clicks VALUES ('a', '2026-01-01 00:00:13', 3), ('a', '2026-01-01 00:00:35', 4);
SELECT windowing.process(name) FROM unnest(ARRAY['up', 'ap']) name;
-- :40 and :50 pass without rows; :59.999999 is the window's end: on time
INSERT INTO clicks VALUES ('a', '2026-01-01 00:01:05', 5);
SELECT windowing.process(name) FROM unnest(ARRAY['up', 'ap']) name;
SELECT windowing.flush(name) FROM unnest(ARRAY['up', 'ap']) name;
SELECT k, window_start, n, total, fire_count, is_final, pane FROM up_results ORDER BY 1, 2;
SELECT k, window_start, n, total, fire_count, is_final, pane FROM ap_results
ORDER BY 1, 2, fire_count;

-- allowed lateness: a row after the on-time firing fires a late pane.
-- Rows at 10 and 40 in [0, 100): timer at 30, which the row at 40 passes
-- (early, 2 rows; next timer 60).  The row at 120 takes the watermark to
-- 119, past 60 together with the window's end at 99: no early firing at
-- 60, the firing on time at 99 (2 rows).  The row at 50 is late for
-- [0, 100), alive until 149: it fires at once (late, 3 rows).  The row at
-- 170 takes the watermark to 169: [100, 200) fires early at its timer
-- 150 (rows 120 and 170), and [0, 100) ends its life (a final row
-- repeating its late result).
CREATE TABLE taps (k text, ts bigint, v int);
SELECT windowing.create_pipeline('lt', 'taps', 'ts', '{k}', windowing.tumbling('100 milliseconds'),
    'count(*) AS n, sum(v) AS total', allowed_lateness => '50 milliseconds', emit => 'append',
    start => false, retention => 'consume', trigger => 'early every 30 milliseconds');
INSERT INTO taps VALUES ('a', 10, 1), ('a', 40, 2), ('a', 120, 3), ('a', 50, 4), ('a', 170, 5);
SELECT windowing.process('lt');
SELECT k, window_start, n, total, fire_count, is_final, pane FROM lt_results
ORDER BY window_start, fire_count, is_final;

-- sessions: a merged session keeps the earliest early timer of those it
-- covers (Flink's onMerge)
CREATE TABLE visits (k text, ts bigint, v int);
SELECT windowing.create_pipeline('se', 'visits', 'ts', '{k}', windowing.session('30 milliseconds'),
    'count(*) AS n, sum(v) AS total', max_out_of_orderness => '1 second', emit => 'append',
    start => false, retention => 'consume', trigger => 'early every 10 milliseconds');
-- [0, 30) has its timer at 10, [40, 70) at 50; the row at 25 merges them
-- into [0, 70), which keeps 10: a watermark of 15 fires it early
INSERT INTO visits VALUES ('b', 0, 1), ('b', 40, 2), ('b', 25, 3);
SELECT windowing.process('se');
SELECT windowing.advance_watermark('se', 15::bigint);
SELECT windowing.flush('se');
SELECT k, window_start, window_end, n, total, fire_count, is_final, pane FROM se_results
ORDER BY window_start, fire_count;

-- early every so many rows (Flink's CountTrigger, before the firing on
-- time): a's second and fourth rows fire it early; b has one row
CREATE TABLE orders (k text, ts timestamptz, v int);
SELECT windowing.create_pipeline('ro', 'orders', 'ts', '{k}', windowing.tumbling('1 minute'),
    'count(*) AS n, sum(v) AS total', emit => 'append', start => false,
    retention => 'consume', trigger => 'early every 2 rows');
INSERT INTO orders VALUES ('a', '2026-01-01 00:00:01', 1), ('a', '2026-01-01 00:00:02', 2),
    ('a', '2026-01-01 00:00:03', 3), ('b', '2026-01-01 00:00:04', 10),
    ('a', '2026-01-01 00:00:04', 4);
SELECT windowing.process('ro');
SELECT windowing.flush('ro');
SELECT k, window_start, n, total, fire_count, is_final, pane FROM ro_results
ORDER BY k, fire_count;
-- a merged session counts the rows of those it covers: 1 + 1, and the
-- row that merges them makes 3
SELECT windowing.create_pipeline('rs', 'visits', 'ts', '{k}', windowing.session('30 milliseconds'),
    'count(*) AS n, sum(v) AS total', max_out_of_orderness => '1 second', emit => 'append',
    start => false, retention => 'consume', trigger => 'early every 3 rows');
INSERT INTO visits VALUES ('c', 0, 1), ('c', 40, 2), ('c', 25, 3);
SELECT windowing.process('rs');
SELECT windowing.flush('rs');
SELECT k, window_start, window_end, n, total, fire_count, is_final, pane FROM rs_results
WHERE k = 'c' ORDER BY fire_count;

-- the same results whatever the step size and wherever the state is kept
-- (shared memory, or read back from the heap), for tumbling, hopping and
-- session windows, early by event time and (tr, sr) by rows
CREATE TABLE ticks (k int, ts bigint, v int);
INSERT INTO ticks
  SELECT i % 7, (i * 7919) % 400 + i * 3, i % 17 FROM generate_series(1, 2000) i;
SELECT windowing.create_pipeline(kind || size, 'ticks', 'ts', '{k}',
    CASE WHEN kind IN ('tu', 'tr') THEN windowing.tumbling('200 milliseconds')
         WHEN kind = 'ho' THEN windowing.hopping('200 milliseconds', '50 milliseconds')
         ELSE windowing.session('40 milliseconds') END,
    'count(*) AS n, sum(v) AS total', max_out_of_orderness => '100 milliseconds',
    allowed_lateness => '60 milliseconds', emit => 'append', start => false,
    retention => 'consume',
    trigger => CASE WHEN kind IN ('tr', 'sr') THEN 'early every 5 rows'
                    ELSE 'early every 70 milliseconds' END)
FROM unnest(ARRAY['tu', 'ho', 'se', 'tr', 'sr']) kind, unnest(ARRAY['1', '5000', 'heap']) size;
DO $$
DECLARE
    kind text;
BEGIN
    FOREACH kind IN ARRAY ARRAY['tu', 'ho', 'se', 'tr', 'sr'] LOOP
        WHILE windowing.process(kind || '1', 7) > 0 LOOP END LOOP;
        PERFORM windowing.flush(kind || '1');
        -- every step reads the state back from the heap
        LOOP
            PERFORM windowing._forget_state(id) FROM windowing.pipeline WHERE name = kind || 'heap';
            EXIT WHEN windowing.process(kind || 'heap', 13) = 0;
        END LOOP;
        PERFORM windowing._forget_state(id) FROM windowing.pipeline WHERE name = kind || 'heap';
        PERFORM windowing.flush(kind || 'heap');
        PERFORM windowing.process(kind || '5000', 5000);
        PERFORM windowing.flush(kind || '5000');
    END LOOP;
END $$;
\i sql/include/differences.sql
SELECT a, b, pg_temp.differences(a || '_results', b || '_results',
    'k, window_start, window_end, n, total, fire_count, is_final, pane') AS differences
FROM (VALUES ('tu1', 'tu5000'), ('ho1', 'ho5000'), ('se1', 'se5000'), ('tr1', 'tr5000'),
             ('sr1', 'sr5000'), ('tu1', 'tuheap'), ('ho1', 'hoheap'), ('se1', 'seheap'),
             ('tr1', 'trheap'), ('sr1', 'srheap')) p(a, b);
SELECT kind, pane, count(*) AS firings
FROM (SELECT 'tu' AS kind, * FROM tu1_results UNION ALL SELECT 'ho', * FROM ho1_results
      UNION ALL SELECT 'se', * FROM se1_results UNION ALL SELECT 'tr', * FROM tr1_results
      UNION ALL SELECT 'sr', * FROM sr1_results) r
GROUP BY 1, 2 ORDER BY 1, 2;
-- a window's last firing is on time or late, and its early firings come
-- before it with no more rows than it has
SELECT count(*) FILTER (WHERE l.pane = 'early') AS last_is_early,
       count(*) FILTER (WHERE e.fire_count >= l.fire_count OR e.n > l.n) AS early_beyond_last
FROM (SELECT DISTINCT ON (k, window_start, window_end) * FROM tu1_results
      ORDER BY k, window_start, window_end, fire_count DESC) l
LEFT JOIN tu1_results e ON e.k = l.k AND e.window_start = l.window_start
     AND e.window_end = l.window_end AND e.pane = 'early';

-- alter_pipeline: another early interval, from the next step
SELECT windowing.alter_pipeline('up', trigger => 'early every 20 seconds');
SELECT trigger FROM windowing.pipelines WHERE name = 'up';
-- refused: to or from firing at the watermark only
SELECT windowing.alter_pipeline('up', trigger => 'event time');
SELECT windowing.create_pipeline('plain', 'clicks', 'ts', '{k}', windowing.tumbling('1 minute'),
    start => false);
SELECT windowing.alter_pipeline('plain', trigger => 'early every 1 second');

-- refused definitions
SELECT windowing.create_pipeline('bad', 'clicks', 'ts', '{k}', windowing.tumbling('1 minute'),
    start => false, trigger => 'every 10 seconds');
SELECT windowing.create_pipeline('bad', 'clicks', 'ts', '{k}', windowing.tumbling('1 minute'),
    start => false, trigger => 'early every 0 seconds');
SELECT windowing.create_pipeline('bad', 'clicks', 'ts', '{k}', windowing.tumbling('1 minute'),
    start => false, trigger => 'early every 1 month');
SELECT windowing.create_pipeline('bad', 'taps', 'ts', '{k}', windowing.tumbling('100 milliseconds'),
    start => false, trigger => 'early every 10 microseconds');
SELECT windowing.create_pipeline('bad', 'clicks', 'ts', '{k}', windowing.tumbling('1 minute'),
    start => false, trigger => 'early every 0 rows');
SELECT windowing.create_pipeline('bad', 'clicks', 'ts', '{k}', windowing.counting(10),
    start => false, trigger => 'early every 10 seconds');
-- 'event time' is the default, stored as such
SELECT windowing.create_pipeline('et', 'clicks', 'ts', '{k}', windowing.tumbling('1 minute'),
    start => false, trigger => 'EVENT TIME');
SELECT name, trigger FROM windowing.pipelines WHERE name IN ('et', 'plain') ORDER BY name;
\d et_results
