-- Evictors (Flink's CountEvictor, TimeEvictor and DeltaEvictor, before or
-- after the window function): a window keeps its rows, and when it fires
-- the evictor drops some for good; the aggregates see those left.
-- Hand-worked, on bigint time (milliseconds), tumbling 100 ms windows.
\set SHOW_CONTEXT never
CREATE TABLE ev_rows (k text, ts bigint, v int);
-- (create_pipeline prints ids that depend on the tests before this one)
CREATE FUNCTION pg_temp.pipeline(name text, evictor text, trig text DEFAULT 'early every 3 rows',
                                 assigner windowing.assigner DEFAULT windowing.tumbling('100 milliseconds'))
RETURNS void LANGUAGE sql AS $$
    SELECT NULL::void FROM windowing.create_pipeline(name, 'ev_rows', 'ts', '{k}', assigner,
        'count(*) AS n, sum(v) AS s, min(ts) AS first_ts', allowed_lateness => '50 milliseconds',
        emit => 'append', trigger => trig, evictor => evictor, start => false, retention => 'keep')
$$;
\i sql/include/drain.sql

-- Rows 1 to 6 (v = ts), then 120 (v 0: the watermark, 119, passes [0,
-- 100)), then 50 (v 100: late, within the lateness).
INSERT INTO ev_rows VALUES ('a', 1, 1), ('a', 2, 2), ('a', 3, 3), ('a', 4, 4), ('a', 5, 5),
                           ('a', 6, 6), ('a', 120, 0), ('a', 50, 100);

-- 'count 2' drops all but the last 2 rows before the aggregates run:
--   row 3 fires (every 3 rows): rows 1, 2, 3; 1 goes: n 2, s 5;
--   row 6 fires: rows 2 to 6; 2, 3, 4 go: n 2, s 11;
--   on time: rows 5, 6: n 2, s 11;
--   row 50 fires late: rows 5, 6, 50; 5 goes: n 2, s 106.
SELECT pg_temp.pipeline('ev_count', 'count 2');
SELECT windowing.process('ev_count');
SELECT window_start, n, s, first_ts, fire_count, pane FROM ev_count_results
WHERE window_start = 0 ORDER BY fire_count;

-- The same in steps of one row, each reading its state back from the heap.
SELECT pg_temp.pipeline('ev_count_steps', 'count 2');
CALL pg_temp.drain('ev_count_steps', 1, 1, flush => false);
SELECT count(*) AS differences FROM (
  (SELECT window_start, n, s, first_ts, fire_count, pane FROM ev_count_results
   EXCEPT ALL SELECT window_start, n, s, first_ts, fire_count, pane FROM ev_count_steps_results)
  UNION ALL
  (SELECT window_start, n, s, first_ts, fire_count, pane FROM ev_count_steps_results
   EXCEPT ALL SELECT window_start, n, s, first_ts, fire_count, pane FROM ev_count_results)) d;

-- 'count 2 after' drops them after the aggregates ran:
--   row 3 fires with rows 1, 2, 3 (n 3, s 6), then keeps 2, 3;
--   row 6 fires with 2 to 6 (n 5, s 20), then keeps 5, 6;
--   on time with 5, 6 (n 2, s 11);
--   row 50 fires late with 5, 6, 50 (n 3, s 111), then keeps 6, 50.
SELECT pg_temp.pipeline('ev_after', 'count 2 after');
SELECT windowing.process('ev_after');
SELECT window_start, n, s, first_ts, fire_count, pane FROM ev_after_results
WHERE window_start = 0 ORDER BY fire_count;

-- Purging: each firing has the rows since the one before, less those the
-- evictor drops: rows 2, 3 (n 2, s 5), then 5, 6 (n 2, s 11); on time
-- none came since; late, row 50 alone.
SELECT pg_temp.pipeline('ev_purge', 'count 2', trig => 'purging early every 3 rows');
SELECT windowing.process('ev_purge');
SELECT window_start, n, s, first_ts, fire_count, pane FROM ev_purge_results
WHERE window_start = 0 ORDER BY fire_count;

-- 'time 3 milliseconds' keeps the rows after the latest time less 3 ms
-- (TimeEvictor drops those at or before it): at the firing on time of
-- [0, 100), latest 6, rows 4, 5, 6 stay: n 3, s 15; late, latest 50,
-- row 50 alone.
SELECT pg_temp.pipeline('ev_time', 'time 3 milliseconds', trig => NULL);
SELECT windowing.process('ev_time');
SELECT window_start, n, s, first_ts, fire_count FROM ev_time_results
WHERE window_start = 0 ORDER BY fire_count;

-- 'delta 3 of v' drops the rows whose v is 3 or more from the last row's
-- (DeltaEvictor): on time, the last row is 6: rows 4, 5, 6 stay (n 3, s
-- 15); late, the last is 50 (v 100): only it stays.  A NULL v stays.
SELECT pg_temp.pipeline('ev_delta', 'delta 3 of v', trig => NULL);
SELECT windowing.process('ev_delta');
SELECT window_start, n, s, first_ts, fire_count FROM ev_delta_results
WHERE window_start = 0 ORDER BY fire_count;

-- Sessions that merge keep their rows in arrival order: 1, 2, 3 make one
-- session, which fires on time when 20 arrives; 20, 21 make another, and
-- 12 joins the two: 'count 3' keeps 20, 21, 12 when the merged session
-- fires, at flush(), and the row that ends its life repeats that.
TRUNCATE ev_rows;
INSERT INTO ev_rows VALUES ('s', 1, 1), ('s', 2, 2), ('s', 3, 3), ('s', 20, 20), ('s', 21, 21),
                           ('s', 12, 12);
SELECT pg_temp.pipeline('ev_sessions', 'count 3', trig => NULL,
                        assigner => windowing.session('10 milliseconds'));
SELECT windowing.process('ev_sessions');
SELECT windowing.flush('ev_sessions');
SELECT window_start, window_end, n, s, first_ts, fire_count, is_final FROM ev_sessions_results
ORDER BY window_end, is_final;

SELECT name, evictor FROM windowing.pipelines WHERE name LIKE 'ev\_%' ORDER BY name;

-- Refused.
SELECT windowing.create_pipeline('bad', 'ev_rows', 'ts', '{k}', windowing.counting(5),
    evictor => 'count 2', retention => 'keep');
SELECT windowing.create_pipeline('bad', 'ev_rows', NULL, '{k}', windowing.tumbling('1 second'),
    evictor => 'time 1 second', retention => 'keep');
SELECT windowing.create_pipeline('bad', 'ev_rows', 'ts', '{k}', windowing.tumbling('1 second'),
    evictor => 'delta 1 of k', retention => 'keep');
SELECT windowing.create_pipeline('bad', 'ev_rows', 'ts', '{k}', windowing.tumbling('1 second'),
    evictor => 'delta 1 of nope', retention => 'keep');
SELECT windowing.create_pipeline('bad', 'ev_rows', 'ts', '{k}', windowing.tumbling('1 second'),
    evictor => 'count 0', retention => 'keep');
SELECT windowing.create_pipeline('bad', 'ev_rows', 'ts', '{k}', windowing.tumbling('1 second'),
    evictor => 'keep the best', retention => 'keep');
SELECT windowing.create_pipeline('bad', 'ev_rows', 'ts', '{k}', windowing.tumbling('1 second'),
    evictor => 'delta 1', retention => 'keep');

SELECT windowing.drop_pipeline(name, drop_tables => true) FROM windowing.pipelines
WHERE name LIKE 'ev\_%';
DROP TABLE ev_rows;
