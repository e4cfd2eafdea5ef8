-- Sliding windows computed from slices (the default for pipelines created
-- from 0.3 on, when nothing is allowed late) give exactly what per-window
-- state gives: same results, same late rows, whatever the step size.
CREATE TABLE ticks (k int, ts bigint, v int);
INSERT INTO ticks
  SELECT i % 5, (i * 7919) % 400 + i * 3, i % 17 FROM generate_series(1, 3000) i;
SELECT windowing.create_pipeline(name, 'ticks', 'ts', '{k}',
    windowing.hopping('200 milliseconds', '50 milliseconds', '10 milliseconds'),
    'count(*) AS n, sum(v) AS total, min(v), max(v), avg(v)',
    max_out_of_orderness => '100 milliseconds', start => false, retention => 'consume')
FROM unnest(ARRAY['s7', 's10000', 'w7', 'w10000']) name;
-- pipelines made before 0.3 keep their state per window
UPDATE windowing.pipeline SET sliced = false WHERE name LIKE 'w%';
SELECT name, sliced FROM windowing.pipeline ORDER BY name;

-- halfway, the windows not fired yet are the same
SELECT windowing.process(name, 1500) FROM unnest(ARRAY['s7', 'w7']) name;
SELECT count(*) AS open_windows,
       count(*) FILTER (WHERE s.key IS NULL OR w.key IS NULL) AS differences
FROM (SELECT key::text, window_start, window_end, results::text FROM windowing.open_windows('s7')) s
FULL JOIN (SELECT key::text, window_start, window_end, results::text FROM windowing.open_windows('w7')) w
  USING (key, window_start, window_end, results);

DO $$
BEGIN
    WHILE windowing.process('s7', 7) > 0 LOOP END LOOP;
    WHILE windowing.process('w7', 7) > 0 LOOP END LOOP;
    PERFORM windowing.process('s10000', 10000);
    PERFORM windowing.process('w10000', 10000);
    PERFORM windowing.flush(name) FROM unnest(ARRAY['s7', 's10000', 'w7', 'w10000']) name;
END $$;
SELECT count(*) AS windows, sum(n) AS rows_in_windows, sum(total) AS total,
       count(*) FILTER (WHERE fire_count <> 1 OR NOT is_final) AS refired
FROM s7_results;
SELECT reason, count(*) AS late_rows FROM s7_late GROUP BY reason ORDER BY reason;

-- every pair of result tables and late tables holds the same rows
\i sql/include/differences.sql
SELECT a, b,
       pg_temp.differences(a || '_results', b || '_results',
           'k, window_start, window_end, n, total, min, max, avg, fire_count, is_final') AS results,
       pg_temp.differences(a || '_late', b || '_late',
           'event_time, watermark, reason, missed_windows, row_data::text') AS late_rows
FROM (VALUES ('s7', 's10000'), ('s7', 'w7'), ('s7', 'w10000')) p(a, b);

-- slices of gcd(size, slide) when the size is not a multiple of the slide
SELECT windowing.create_pipeline(name, 'ticks', 'ts', '{k}',
    windowing.hopping('100 milliseconds', '40 milliseconds'),
    'count(*) AS n, sum(v) AS total, min(v), max(v), avg(v)',
    max_out_of_orderness => '50 milliseconds', start => false, retention => 'consume')
FROM unnest(ARRAY['g', 'h']) name;
UPDATE windowing.pipeline SET sliced = false WHERE name = 'h';
DO $$
BEGIN
    WHILE windowing.process('g', 11) > 0 LOOP END LOOP;
    PERFORM windowing.process('h');
    PERFORM windowing.flush(name) FROM unnest(ARRAY['g', 'h']) name;
END $$;
SELECT count(*) AS windows, sum(n) AS rows_in_windows,
       pg_temp.differences('g_results', 'h_results',
           'k, window_start, window_end, n, total, min, max, avg, fire_count, is_final') AS results,
       pg_temp.differences('g_late', 'h_late',
           'event_time, watermark, reason, missed_windows, row_data::text') AS late_rows
FROM g_results;

-- cumulating windows from slices of one step: the same windows, late rows
-- and open windows as state per window, in steps of any size
SELECT windowing.create_pipeline(name, 'ticks', 'ts', '{k}',
    windowing.cumulating('30 milliseconds', '300 milliseconds', '10 milliseconds'),
    'count(*) AS n, sum(v) AS total, min(v), max(v), avg(v)',
    max_out_of_orderness => '100 milliseconds', start => false, retention => 'consume')
FROM unnest(ARRAY['c', 'cw']) name;
UPDATE windowing.pipeline SET sliced = false WHERE name = 'cw';
SELECT windowing.process(name, 1500) FROM unnest(ARRAY['c', 'cw']) name;
SELECT count(*) AS open_windows,
       count(*) FILTER (WHERE s.key IS NULL OR w.key IS NULL) AS differences
FROM (SELECT key::text, window_start, window_end, results::text FROM windowing.open_windows('c')) s
FULL JOIN (SELECT key::text, window_start, window_end, results::text FROM windowing.open_windows('cw')) w
  USING (key, window_start, window_end, results);
DO $$
BEGIN
    WHILE windowing.process('c', 11) > 0 LOOP END LOOP;
    PERFORM windowing.process('cw');
    PERFORM windowing.flush(name) FROM unnest(ARRAY['c', 'cw']) name;
END $$;
SELECT count(*) AS windows, sum(n) AS rows_in_windows,
       pg_temp.differences('c_results', 'cw_results',
           'k, window_start, window_end, n, total, min, max, avg, fire_count, is_final') AS results,
       pg_temp.differences('c_late', 'cw_late',
           'event_time, watermark, reason, missed_windows, row_data::text') AS late_rows
FROM c_results;
SELECT reason, count(*) AS late_rows FROM c_late GROUP BY reason ORDER BY reason;

-- A step of more than one chunk of rows (10,000) writes each chunk's windows
-- as it goes where that writes the same rows as writing them at its end:
-- when nothing is allowed late (a window fires once), and in append mode
-- (every firing is a row).  The same rows as steps of one chunk, for
-- sliding, session and tumbling windows, upsert and append, and windows
-- that re-fire on allowed-late rows.
CREATE TABLE long_ticks (k int, ts bigint, v int);
INSERT INTO long_ticks
  SELECT i % 50, i * 2 + (i * 7919) % 37, i % 17 FROM generate_series(1, 25000) i;
SELECT count(*) FROM (
  SELECT windowing.create_pipeline(p.name || s.suffix, 'long_ticks', 'ts', '{k}', p.assigner,
      'count(*) AS n, sum(v) AS total', max_out_of_orderness => '20 milliseconds',
      allowed_lateness => p.lateness::interval, emit => p.emit, start => false, retention => 'consume')
  FROM (VALUES ('lh', windowing.hopping('1 second', '250 milliseconds'), 'upsert', '0'),
               ('ls', windowing.session('90 milliseconds'), 'upsert', '0'),
               ('lt', windowing.tumbling('1 second'), 'append', '0'),
               ('la', windowing.tumbling('1 second'), 'append', '30 milliseconds'))
         p(name, assigner, emit, lateness),
       (VALUES ('_one'), ('_steps')) s(suffix)) c;
DO $$
BEGIN
    PERFORM windowing.process(name || '_one') FROM unnest(ARRAY['lh', 'ls', 'lt', 'la']) name;
    WHILE windowing.process('lh_steps', 9000) > 0 LOOP END LOOP;
    WHILE windowing.process('ls_steps', 9000) > 0 LOOP END LOOP;
    WHILE windowing.process('lt_steps', 9000) > 0 LOOP END LOOP;
    WHILE windowing.process('la_steps', 9000) > 0 LOOP END LOOP;
    PERFORM windowing.flush(name || suffix) FROM unnest(ARRAY['lh', 'ls', 'lt', 'la']) name,
        unnest(ARRAY['_one', '_steps']) suffix;
END $$;
SELECT name, pg_temp.differences(name || '_one_results', name || '_steps_results',
           'k, window_start, window_end, n, total, fire_count, is_final') AS results,
       pg_temp.differences(name || '_one_late', name || '_steps_late',
           'event_time, watermark, reason, missed_windows') AS late_rows
FROM unnest(ARRAY['lh', 'ls', 'lt', 'la']) name;
SELECT 'lh' AS name, count(*) AS windows, sum(n) AS rows_in_windows FROM lh_one_results
UNION ALL SELECT 'ls', count(*), sum(n) FROM ls_one_results
UNION ALL SELECT 'lt', count(*), sum(n) FROM lt_one_results;
SELECT (SELECT count(*) FROM lh_one_late) AS lh_late, (SELECT count(*) FROM ls_one_late) AS ls_late,
       (SELECT count(*) FROM lt_one_late) AS lt_late;
-- the append pipeline with allowed lateness: first firings and re-fires
SELECT count(*) AS firings, count(*) FILTER (WHERE fire_count > 1) AS refires,
       count(DISTINCT (k, window_start, window_end)) AS windows,
       (SELECT sum(n) FROM (SELECT DISTINCT ON (k, window_start) n FROM la_one_results
                            ORDER BY k, window_start, fire_count DESC) last) AS rows_in_windows,
       (SELECT count(*) FROM la_one_late) AS late
FROM la_one_results;

SELECT count(*) FROM (
  SELECT windowing.drop_pipeline(name, true)
  FROM unnest(ARRAY['s7', 's10000', 'w7', 'w10000', 'g', 'h', 'c', 'cw', 'lh_one', 'lh_steps',
                    'ls_one', 'ls_steps', 'lt_one', 'lt_steps', 'la_one', 'la_steps']) name) d;
DROP TABLE ticks, long_ticks;
