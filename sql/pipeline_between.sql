-- Rows between hopping windows (size < slide): Flink side-outputs such a
-- row as late when its time plus the allowed lateness is at or behind the
-- watermark (isElementLate), and keeps no trace of one on time.
-- hopping(10, 50) on bigint time: windows [0,10), [50,60), [100,110), ...
-- No out-of-orderness: after a row at t the watermark is t - 1.
CREATE TABLE gaps (ts bigint);
-- sliced state (lateness 0), state per window, and lateness 15 with no late table
SELECT windowing.create_pipeline(name, 'gaps', 'ts',
    assigner => windowing.hopping('10 milliseconds', '50 milliseconds'),
    aggregates => 'count(*) AS n, sum(ts) AS total', start => false, retention => 'consume')
FROM unnest(ARRAY['sliced', 'per_window']) name;
UPDATE windowing.pipeline SET sliced = false WHERE name = 'per_window';
SELECT windowing.create_pipeline('lateness15', 'gaps', 'ts',
    assigner => windowing.hopping('10 milliseconds', '50 milliseconds'),
    aggregates => 'count(*) AS n, sum(ts) AS total', allowed_lateness => '15 milliseconds',
    late_table => '', start => false, retention => 'consume');
SELECT name, sliced FROM windowing.pipeline ORDER BY name;
-- 5: in [0,10); 30: between, on time (watermark 4), then watermark 29;
-- 29: between, at the watermark: late (for lateness 15: 44 > 29, on time);
-- 30 again: on time; 14: late for both (14 + 15 = 29); 15: late, but on
-- time with lateness 15 (30 > 29); 105: watermark 104; 55: its window
-- [50,60) is gone: late; 70: between, late for both (85 <= 104); 103: in
-- [100,110).
INSERT INTO gaps SELECT unnest(ARRAY[5, 30, 29, 30, 14, 15, 105, 55, 70, 103]);
DO $$
BEGIN
    WHILE windowing.process('sliced', 3) > 0 LOOP END LOOP;
    PERFORM windowing.process(name) FROM unnest(ARRAY['per_window', 'lateness15']) name;
    PERFORM windowing.flush(name) FROM unnest(ARRAY['sliced', 'per_window', 'lateness15']) name;
END $$;
SELECT window_start, window_end, n, total, fire_count, is_final FROM sliced_results ORDER BY window_end;
SELECT event_time, watermark, reason, missed_windows, row_data FROM sliced_late ORDER BY watermark, event_time;
SELECT name, rows_consumed, windows_fired, late_routed, late_dropped
FROM windowing.pipeline_stats ORDER BY name;
-- state per window gives the same results and late rows
\i sql/include/differences.sql
SELECT pg_temp.differences('sliced_results', 'per_window_results',
           'window_start, window_end, n, total, fire_count, is_final') AS results,
       pg_temp.differences('sliced_late', 'per_window_late',
           'event_time, watermark, reason, missed_windows, row_data::text') AS late_rows;
SELECT window_start, window_end, n, total, fire_count, is_final FROM lateness15_results ORDER BY window_end, fire_count;

SELECT windowing.drop_pipeline(name, drop_tables => true) FROM windowing.pipelines;
DROP TABLE gaps;
