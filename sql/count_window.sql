-- count_window(size, slide): Flink's countWindow, per partition in order.
CREATE TABLE readings (sensor text, seq int, v int);
INSERT INTO readings
  SELECT s, i, i * 10 FROM unnest(ARRAY['x', 'y']) s, generate_series(1, 7) i;

-- Tumbling: windows of 3 rows; row 7 is in window 3, not yet complete.
SELECT sensor, seq, windowing.count_window(3) OVER (PARTITION BY sensor ORDER BY seq)
FROM readings WHERE sensor = 'x' ORDER BY seq;

-- Sliding: the last 3 rows every 2 rows (window k fires at row 2k).
SELECT seq, windowing.count_window(3, 2) OVER (ORDER BY seq)
FROM readings WHERE sensor = 'x' ORDER BY seq;

-- Aggregate per count window, keeping only the windows Flink would have
-- fired: those whose firing row (k * slide) exists.
SELECT sensor, k, array_agg(seq ORDER BY seq) AS rows, sum(v)
FROM (SELECT sensor, seq, v, count(*) OVER (PARTITION BY sensor) AS n,
             unnest(windowing.count_window(3, 2) OVER (PARTITION BY sensor ORDER BY seq)) AS k
      FROM readings) x
WHERE k * 2 <= n
GROUP BY sensor, k ORDER BY sensor, k;

-- Slide larger than size: rows between windows belong to none.
SELECT seq, windowing.count_window(2, 3) OVER (ORDER BY seq)
FROM readings WHERE sensor = 'y' ORDER BY seq;

-- NULL size: NULL.
SELECT seq, windowing.count_window(NULL) OVER (ORDER BY seq)
FROM readings WHERE sensor = 'y' AND seq < 3 ORDER BY seq;

-- Errors.
SELECT windowing.count_window(0) OVER () FROM readings;
SELECT windowing.count_window(3, -1) OVER () FROM readings;
SELECT windowing.count_window(1000000000000, 1) OVER () FROM readings;

DROP TABLE readings;
