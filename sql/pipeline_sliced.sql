-- Sliding windows computed from slices (the default for pipelines created
-- from 0.3 on, and from 0.5 on with allowed lateness too) give exactly what
-- per-window state gives: same results, same late rows, whatever the step
-- size.
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
-- (and the windows' ends of life, the rows that are final)
SELECT count(*) FILTER (WHERE NOT is_final) AS firings,
       count(*) FILTER (WHERE fire_count > 1 AND NOT is_final) AS refires,
       count(*) FILTER (WHERE is_final) AS ended,
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

-- Sliding and cumulating windows with allowed lateness from slices too: a
-- row late for windows still alive fires each of them again with its whole
-- result, slices stay until their last window is cleaned up, and cleaned
-- up windows become final.  By hand first: hopping 10 / 5 ms, lateness
-- 10 ms, the watermark one tick behind the latest row.
CREATE TABLE few (k int, ts bigint);
SELECT windowing.create_pipeline(name, 'few', 'ts', '{k}',
    windowing.hopping('10 milliseconds', '5 milliseconds'), 'count(*) AS n, sum(ts) AS total',
    allowed_lateness => '10 milliseconds', emit => emit, start => false, retention => 'consume')
FROM (VALUES ('fs', 'upsert'), ('fw', 'upsert'), ('fa', 'append'), ('faw', 'append')) p(name, emit);
UPDATE windowing.pipeline SET sliced = false WHERE name IN ('fw', 'faw');
SELECT name, sliced FROM windowing.pipeline WHERE name LIKE 'f%' ORDER BY name;
-- one row a step: 3 and 12 fire [-5,5) and [0,10); 4 and 1 fire them again;
-- 16 fires [5,15) and cleans up [-5,5); 2 misses it; 30 fires [10,20)
-- past its cleanup time and [15,25), and cleans up up to [10,20); 7 and 14
-- miss every window; 17 misses [10,20) and fires [15,25) again; 21 is the
-- first row of [20,30), fired already: it fires at once
INSERT INTO few SELECT 1, ts FROM unnest(ARRAY[3, 12, 4, 1, 16, 2, 30, 7, 14, 17, 21]) ts;
DO $$
BEGIN
    FOR i IN 1..11 LOOP
        PERFORM windowing.process(name, 1) FROM unnest(ARRAY['fs', 'fw', 'fa', 'faw']) name;
    END LOOP;
END $$;
SELECT window_start, window_end, n, total, fire_count, is_final FROM fs_results ORDER BY window_end;
SELECT window_start, window_end, n, total, fire_count, is_final FROM fa_results
ORDER BY window_end, fire_count, is_final;
SELECT event_time, watermark, reason, missed_windows FROM fs_late ORDER BY event_time;
SELECT windowing.flush(name) FROM unnest(ARRAY['fs', 'fw', 'fa', 'faw']) name;
SELECT window_start, window_end, n, total, fire_count, is_final FROM fs_results ORDER BY window_end;
SELECT count(*) FILTER (WHERE NOT is_final) AS firings, count(*) FILTER (WHERE is_final) AS ended
FROM fa_results;
SELECT a, pg_temp.differences(a || '_results', b || '_results',
           'k, window_start, window_end, n, total, fire_count, is_final') AS results,
       pg_temp.differences(a || '_late', b || '_late',
           'event_time, watermark, reason, missed_windows, row_data::text') AS late_rows
FROM (VALUES ('fs', 'fw'), ('fa', 'faw')) p(a, b);

-- Rows out of order by up to 89 ms, every eleventh 200 ms more, and the
-- time jumping 1 s ahead every 300 rows, for sliding windows (slices of a
-- fifth of a window, of 20 ms where the size is not a multiple of the
-- slide, and slices that are whole windows) and cumulating ones, upsert
-- and append; "s" in steps of 37 rows, "r" too but with its state read
-- back from the heap every third step, "w" with state per window.  The
-- watermark is moved 60 ms ahead by hand at the eighth step.
CREATE TABLE lates (k int, ts bigint, v int);
INSERT INTO lates
  SELECT i % 3, i * 4 + (i / 300) * 1000 - (i * 7919) % 90 - CASE WHEN i % 11 = 0 THEN 200 ELSE 0 END,
         i % 13
  FROM generate_series(1, 1500) i;
SELECT count(*) FROM (
  SELECT windowing.create_pipeline(a.kind || e.emit || v.variant, 'lates', 'ts', '{k}', a.assigner,
      'count(*) AS n, sum(v) AS total, max(v)', max_out_of_orderness => '30 milliseconds',
      allowed_lateness => '50 milliseconds', emit => e.mode, start => false, retention => 'consume')
  FROM (VALUES ('h', windowing.hopping('100 milliseconds', '20 milliseconds')),
               ('g', windowing.hopping('100 milliseconds', '40 milliseconds')),
               ('d', windowing.hopping('20 milliseconds', '60 milliseconds')),
               ('c', windowing.cumulating('20 milliseconds', '100 milliseconds'))) a(kind, assigner),
       (VALUES ('u', 'upsert'), ('a', 'append')) e(emit, mode),
       (VALUES ('s'), ('r'), ('w')) v(variant)) c;
UPDATE windowing.pipeline SET sliced = false WHERE name LIKE '__w';
SELECT count(*) FILTER (WHERE sliced) AS sliced, count(*) FILTER (WHERE NOT sliced) AS per_window
FROM windowing.pipeline WHERE name ~ '^[hgdc][ua][srw]$';
CREATE PROCEDURE pg_temp.late_steps(p_name text, reread boolean)
LANGUAGE plpgsql AS $$
DECLARE
    i int := 0;
BEGIN
    LOOP
        IF reread AND i % 3 = 2 THEN
            PERFORM windowing._forget_state(id) FROM windowing.pipeline WHERE name = p_name;
        END IF;
        IF i = 8 THEN
            PERFORM windowing.advance_watermark(p_name, watermark + 60)
            FROM windowing.pipeline WHERE name = p_name;
        END IF;
        EXIT WHEN windowing.process(p_name, 37) = 0;
        COMMIT;
        i := i + 1;
    END LOOP;
    PERFORM windowing.flush(p_name);
    COMMIT;
END
$$;
DO $$
DECLARE
    p text;
BEGIN
    FOR p IN SELECT name FROM windowing.pipeline WHERE name ~ '^[hgdc][ua][srw]$' ORDER BY name LOOP
        CALL pg_temp.late_steps(p, p LIKE '__r');
    END LOOP;
END $$;
SELECT name, pg_temp.differences(name || '_results', replace(name, 's', 'w') || '_results',
           'k, window_start, window_end, n, total, max, fire_count, is_final') AS results,
       pg_temp.differences(name || '_late', replace(name, 's', 'w') || '_late',
           'event_time, watermark, reason, missed_windows, row_data::text') AS late_rows,
       pg_temp.differences(replace(name, 's', 'r') || '_results', replace(name, 's', 'w') || '_results',
           'k, window_start, window_end, n, total, max, fire_count, is_final') AS reread_results,
       pg_temp.differences(replace(name, 's', 'r') || '_late', replace(name, 's', 'w') || '_late',
           'event_time, watermark, reason, missed_windows, row_data::text') AS reread_late_rows
FROM unnest(ARRAY['hus', 'has', 'gus', 'gas', 'dus', 'das', 'cus', 'cas']) name;
-- what they went through: windows fired again, rows late for some windows
-- and for all
SELECT 'hus' AS name, count(*) AS windows, count(*) FILTER (WHERE fire_count > 1) AS refired,
       max(fire_count) AS most_fires, count(*) FILTER (WHERE NOT is_final) AS not_final
FROM hus_results
UNION ALL SELECT 'dus', count(*), count(*) FILTER (WHERE fire_count > 1), max(fire_count),
       count(*) FILTER (WHERE NOT is_final) FROM dus_results
UNION ALL SELECT 'cus', count(*), count(*) FILTER (WHERE fire_count > 1), max(fire_count),
       count(*) FILTER (WHERE NOT is_final) FROM cus_results;
SELECT 'has' AS name, count(*) FILTER (WHERE NOT is_final) AS firings,
       count(*) FILTER (WHERE fire_count > 1 AND NOT is_final) AS refires,
       count(*) FILTER (WHERE is_final) AS ended FROM has_results;
SELECT 'hus' AS name, reason, count(*) AS late_rows FROM hus_late GROUP BY reason
UNION ALL SELECT 'cus', reason, count(*) FROM cus_late GROUP BY reason
ORDER BY name, reason;

SELECT count(*) FROM (
  SELECT windowing.drop_pipeline(name, true) FROM windowing.pipeline
  WHERE name ~ '^[hgdc][ua][srw]$' OR name IN ('fs', 'fw', 'fa', 'faw')) d;
DROP TABLE few, lates;

