-- Count windows in pipelines: windowing.counting(size, slide), Flink's
-- countWindow: per key, in arrival order, every slide rows a window of the
-- last size rows, named by row numbers [first, last + 1).
SET datestyle = ISO;
\set SHOW_CONTEXT never
CREATE TABLE readings (sensor text, seq int, v int, ts bigint);
SELECT windowing.create_pipeline('tumbling3', 'readings', 'ts', '{sensor}', windowing.counting(3),
    'count(*) AS n, sum(v) AS total, windowing.collect(seq) AS seqs', start => false, retention => 'consume');
SELECT windowing.create_pipeline('sliding3_1', 'readings', 'ts', '{sensor}', windowing.counting(3, 1),
    'count(*) AS n, windowing.collect(seq) AS seqs', emit => 'append', start => false, retention => 'consume');
SELECT windowing.create_pipeline('sliding4_2', 'readings', 'ts', '{sensor}', windowing.counting(4, 2),
    'count(*) AS n, windowing.collect(seq) AS seqs', emit => 'append', start => false, retention => 'consume');
-- a slide that does not divide the size (Flink's countWindow(5, 2)) and a
-- slide longer than the size: rows 1, 4, 7, ... of countWindow(2, 3) are in
-- no window
SELECT windowing.create_pipeline(name, 'readings', 'ts', '{sensor}', windowing.counting(size, slide),
    'count(*) AS n, windowing.collect(seq) AS seqs', emit => 'append', start => false, retention => 'consume')
FROM (VALUES ('sliding5_2', 5, 2), ('sampling2_3', 2, 3)) p(name, size, slide);
-- rows arrive interleaved by sensor; time plays no part
INSERT INTO readings SELECT s, i, i * 10, 100 - i FROM generate_series(1, 7) i, unnest(ARRAY['x', 'y']) s
ORDER BY i, s;
-- steps of 5 rows: windows span steps
DO $$
BEGIN
    WHILE windowing.process('tumbling3', 5) > 0 LOOP END LOOP;
    WHILE windowing.process('sliding3_1', 5) > 0 LOOP END LOOP;
    WHILE windowing.process('sliding4_2', 5) > 0 LOOP END LOOP;
    WHILE windowing.process('sliding5_2', 3) > 0 LOOP END LOOP;
    WHILE windowing.process('sampling2_3', 3) > 0 LOOP END LOOP;
END $$;
SELECT sensor, window_start, window_end, n, total, seqs, fire_count, is_final
FROM tumbling3_results ORDER BY sensor, window_start;
SELECT window_start, window_end, n, seqs FROM sliding3_1_results WHERE sensor = 'x' ORDER BY window_end;
SELECT window_start, window_end, n, seqs FROM sliding4_2_results WHERE sensor = 'y' ORDER BY window_end;
-- the same windows as the count_window() SQL function over the same rows
SELECT count(*) AS differences FROM (
  SELECT sensor, window_end - 1 AS last_row, n FROM sliding4_2_results
  EXCEPT
  SELECT sensor, k * 2, count(*) FROM (
    SELECT sensor, unnest(windowing.count_window(4, 2) OVER (PARTITION BY sensor ORDER BY seq)) AS k
    FROM readings) c GROUP BY sensor, k) d;
-- every 2 rows the last 5: rows 1-2, 1-4, 2-6; every 3 rows the last 2:
-- rows 2-3, 5-6
SELECT window_start, window_end, n, seqs FROM sliding5_2_results WHERE sensor = 'x' ORDER BY window_end;
SELECT window_start, window_end, n, seqs FROM sampling2_3_results WHERE sensor = 'y' ORDER BY window_end;
-- the same windows, row for row, as count_window() gives them, without
-- those it has not fired yet
CREATE FUNCTION pg_temp.fired(size int, slide int)
RETURNS TABLE (sensor text, window_start bigint, window_end bigint, seqs int[])
LANGUAGE sql AS $$
  SELECT sensor, min(seq), max(seq) + 1, array_agg(seq ORDER BY seq) FROM (
    SELECT sensor, seq, count(*) OVER (PARTITION BY sensor) AS rows,
           unnest(windowing.count_window(size, slide) OVER (PARTITION BY sensor ORDER BY seq)) AS k
    FROM readings) c
  WHERE k * slide <= rows GROUP BY sensor, k $$;
SELECT (SELECT count(*) FROM (
          (SELECT sensor, window_start, window_end, seqs FROM sliding5_2_results
           EXCEPT ALL SELECT * FROM pg_temp.fired(5, 2))
          UNION ALL (SELECT * FROM pg_temp.fired(5, 2)
           EXCEPT ALL SELECT sensor, window_start, window_end, seqs FROM sliding5_2_results)) d) AS sliding5_2,
       (SELECT count(*) FROM (
          (SELECT sensor, window_start, window_end, seqs FROM sampling2_3_results
           EXCEPT ALL SELECT * FROM pg_temp.fired(2, 3))
          UNION ALL (SELECT * FROM pg_temp.fired(2, 3)
           EXCEPT ALL SELECT sensor, window_start, window_end, seqs FROM sampling2_3_results)) d) AS sampling2_3,
       (SELECT count(*) FROM pg_temp.fired(5, 2)) AS windows5_2, (SELECT count(*) FROM pg_temp.fired(2, 3)) AS windows2_3;

-- end of input: the incomplete window of each key fires as it is (rows 7
-- of tumbling3, rows 4-7 of sliding5_2; row 7 of sampling2_3 is in no
-- window), once: a second flush fires nothing
SELECT windowing.flush(name) FROM unnest(ARRAY['tumbling3', 'sliding5_2', 'sampling2_3', 'tumbling3', 'sliding5_2']) name;
SELECT sensor, window_start, window_end, n, seqs, fire_count, is_final FROM tumbling3_results
WHERE window_start = 7 ORDER BY sensor;
SELECT sensor, window_start, window_end, n, seqs FROM sliding5_2_results
WHERE window_end > 7 ORDER BY sensor, window_end;
SELECT name, windows_fired FROM windowing.pipeline_stats ORDER BY name;
-- a row after the flush fires x's window of rows 4-8 (row 8 ends it), which
-- a flush does not fire again; one more row makes an incomplete window of
-- rows 6-9, which fires at the next flush, once
INSERT INTO readings VALUES ('x', 8, 80, 0);
SELECT windowing.process('sliding5_2'), windowing.flush('sliding5_2');
INSERT INTO readings VALUES ('x', 9, 90, 0);
SELECT windowing.process('sliding5_2'), windowing.flush('sliding5_2'), windowing.flush('sliding5_2');
SELECT window_start, window_end, n, seqs FROM sliding5_2_results
WHERE sensor = 'x' AND window_end > 7 ORDER BY window_end;

-- many panes per window, whose combinations consecutive windows share
-- (two stacks): counting(60, 7) over 1,800 rows of 3 sensors, in steps of
-- 13 rows, fires count_window()'s windows, row for row
CREATE TABLE long_readings (sensor int, seq int, v int, ts bigint);
SELECT windowing.create_pipeline('long60_7', 'long_readings', 'ts', '{sensor}', windowing.counting(60, 7),
    'count(*) AS n, sum(v) AS total, windowing.collect(seq) AS seqs', emit => 'append', start => false, retention => 'consume');
INSERT INTO long_readings SELECT g % 3, g, g * 7919 % 100, 0 FROM generate_series(1, 1800) g;
DO $$ BEGIN WHILE windowing.process('long60_7', 13) > 0 LOOP END LOOP; END $$;
WITH expected AS (
  SELECT sensor, array_agg(seq ORDER BY seq) AS seqs, sum(v) AS total FROM (
    SELECT sensor, seq, v, count(*) OVER (PARTITION BY sensor) AS rows,
           unnest(windowing.count_window(60, 7) OVER (PARTITION BY sensor ORDER BY seq)) AS k
    FROM long_readings) c
  WHERE k * 7 <= rows GROUP BY sensor, k)
SELECT (SELECT count(*) FROM expected) AS windows,
       (SELECT count(*) FROM ((SELECT sensor, seqs, total FROM long60_7_results
                               EXCEPT ALL SELECT sensor, seqs, total FROM expected)
                              UNION ALL (SELECT sensor, seqs, total FROM expected
                                         EXCEPT ALL SELECT sensor, seqs, total FROM long60_7_results)) d)
       AS differences;

SELECT windowing.create_pipeline('bad', 'readings', 'ts', assigner => windowing.counting(5, 0), retention => 'consume');
SELECT windowing.create_pipeline('bad', 'readings', 'ts', assigner => windowing.counting(0), retention => 'consume');
SELECT windowing.drop_pipeline(name, drop_tables => true) FROM windowing.pipelines;
DROP TABLE readings, long_readings;
