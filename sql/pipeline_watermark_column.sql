-- Punctuated watermarks (Flink's WatermarkGenerator that emits a
-- watermark on a marked event): a column of the queue whose values are
-- the pipeline's watermark, read in arrival order like any row.
-- Hand-worked, on bigint time (milliseconds), tumbling 10 ms windows.
\set SHOW_CONTEXT never
CREATE TABLE sensor (k int, ts bigint, wm bigint, v int);
-- (create_pipeline prints ids that depend on the tests before this one)
CREATE FUNCTION pg_temp.pipeline(name text) RETURNS void
LANGUAGE sql AS $$
    SELECT NULL::void FROM windowing.create_pipeline(name, 'sensor', 'ts', '{k}',
        windowing.tumbling('10 milliseconds'), 'count(*) AS n, sum(v) AS s',
        emit => 'append', start => false, retention => 'keep', watermark_column => 'wm')
$$;
\i sql/include/drain.sql

-- Rows, in arrival order:
--   1, 12, 5: no watermark yet, however far the event times go: [0, 10)
--     has rows 1 and 5, [10, 20) row 12;
--   a row with no time and watermark 10 only marks: [0, 10) fires (its last
--     instant, 9, is at or before the watermark);
--   8: late, at or before the watermark;
--   a row with no time and no watermark: to the late table, as ever;
--   15, with watermark 19 in the same row: the row joins [10, 20), then the
--     watermark fires it with rows 12 and 15;
--   25 with watermark 15: the row joins [20, 30); a watermark never goes back.
INSERT INTO sensor VALUES (1, 1, NULL, 1), (1, 12, NULL, 2), (1, 5, NULL, 4),
                          (NULL, NULL, 10, NULL), (1, 8, NULL, 100), (1, NULL, NULL, 7),
                          (1, 15, 19, 3), (2, 25, 15, 6);
SELECT pg_temp.pipeline('marks');
SELECT windowing.process('marks');
SELECT k, window_start, window_end, n, s, fire_count FROM marks_results ORDER BY window_start, k;
SELECT event_time, watermark, reason, missed_windows, row_data->>'v' AS v FROM marks_late
ORDER BY row_data->>'v';
SELECT name, watermark_ms, max_event_ms FROM windowing.pipeline_stats WHERE name = 'marks';
SELECT windowing.flush('marks');
SELECT k, window_start, window_end, n, s, fire_count FROM marks_results ORDER BY window_start, k;

-- The same in steps of one row, each reading its state back from the heap.
SELECT pg_temp.pipeline('marks_steps');
CALL pg_temp.drain('marks_steps', 1, 1);
SELECT count(*) AS differences FROM (
  (SELECT k, window_start, n, s, fire_count FROM marks_results
   EXCEPT ALL SELECT k, window_start, n, s, fire_count FROM marks_steps_results)
  UNION ALL
  (SELECT k, window_start, n, s, fire_count FROM marks_steps_results
   EXCEPT ALL SELECT k, window_start, n, s, fire_count FROM marks_results)) d;
SELECT count(*) FROM marks_steps_late;

-- The definition: no out-of-orderness, the column named.
SELECT name, max_out_of_orderness, watermark_column FROM windowing.pipelines
WHERE name = 'marks';

-- A rebuild replays rows in order of event time, which would move the
-- markers: refused.
SELECT windowing.rebuild('marks');

-- Refused definitions.
CREATE TABLE sensor_ts (k int, ts timestamptz, wm bigint, wm_ts timestamptz);
SELECT windowing.create_pipeline('bad', 'sensor_ts', 'ts', '{k}', windowing.tumbling('1 minute'),
    retention => 'keep', watermark_column => 'wm');
SELECT windowing.create_pipeline('bad', 'sensor_ts', 'ts', '{k}', windowing.tumbling('1 minute'),
    retention => 'keep', watermark_column => 'nope');
SELECT windowing.create_pipeline('bad', 'sensor_ts', 'ts', '{k}', windowing.tumbling('1 minute'),
    retention => 'keep', watermark_column => 'ts');
SELECT windowing.create_pipeline('bad', 'sensor_ts', 'ts', '{k}', windowing.tumbling('1 minute'),
    retention => 'keep', watermark_column => 'wm_ts', max_out_of_orderness => '5 seconds');
SELECT windowing.create_pipeline('bad', 'sensor_ts', NULL, '{k}', windowing.tumbling('1 minute'),
    retention => 'keep', watermark_column => 'wm_ts');
SELECT windowing.create_pipeline('bad', 'sensor_ts', 'ts', '{k}', windowing.counting(5),
    retention => 'keep', watermark_column => 'wm_ts');
-- A column dropped later stops the steps, with the reason.
SELECT NULL::void FROM windowing.create_pipeline('gone', 'sensor_ts', 'ts', '{k}',
    windowing.tumbling('1 minute'), start => false, retention => 'keep', watermark_column => 'wm_ts');
ALTER TABLE sensor_ts DROP COLUMN wm_ts;
SELECT windowing.process('gone');

SELECT windowing.drop_pipeline(name, drop_tables => true) FROM windowing.pipelines
WHERE name IN ('marks', 'marks_steps', 'gone');
DROP TABLE sensor, sensor_ts;
