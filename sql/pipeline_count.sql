-- Count windows in pipelines: windowing.counting(size, slide), Flink's
-- countWindow: per key, in arrival order, every slide rows a window of the
-- last size rows, named by row numbers [first, last + 1).
SET datestyle = ISO;
\set SHOW_CONTEXT never
CREATE TABLE readings (sensor text, seq int, v int, ts bigint);
SELECT windowing.create_pipeline('tumbling3', 'readings', 'ts', '{sensor}', windowing.counting(3),
    'count(*) AS n, sum(v) AS total, windowing.collect(seq) AS seqs', start => false);
SELECT windowing.create_pipeline('sliding3_1', 'readings', 'ts', '{sensor}', windowing.counting(3, 1),
    'count(*) AS n, windowing.collect(seq) AS seqs', emit => 'append', start => false);
SELECT windowing.create_pipeline('sliding4_2', 'readings', 'ts', '{sensor}', windowing.counting(4, 2),
    'count(*) AS n, windowing.collect(seq) AS seqs', emit => 'append', start => false);
-- rows arrive interleaved by sensor; time plays no part
INSERT INTO readings SELECT s, i, i * 10, 100 - i FROM generate_series(1, 7) i, unnest(ARRAY['x', 'y']) s
ORDER BY i, s;
-- steps of 5 rows: windows span steps
DO $$
BEGIN
    WHILE windowing.process('tumbling3', 5) > 0 LOOP END LOOP;
    WHILE windowing.process('sliding3_1', 5) > 0 LOOP END LOOP;
    WHILE windowing.process('sliding4_2', 5) > 0 LOOP END LOOP;
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
-- end of input: the incomplete tumbling window of each key fires as it is
SELECT windowing.flush('tumbling3');
SELECT sensor, window_start, window_end, n, seqs, is_final FROM tumbling3_results
WHERE window_start = 7 ORDER BY sensor;

SELECT windowing.create_pipeline('bad', 'readings', 'ts', assigner => windowing.counting(5, 2));
SELECT windowing.create_pipeline('bad', 'readings', 'ts', assigner => windowing.counting(0));
SELECT windowing.drop_pipeline(name, drop_tables => true) FROM windowing.pipelines;
DROP TABLE readings;
