-- A pipeline of parallelism n is stepped as n parts, each with its own
-- cursor, watermark and state, each stepping the keys of its run of key
-- groups (of 128), each reading every row of the queue: every row's time
-- moves every part's watermark.  So its results and late rows are those of
-- the same pipeline of one part, whatever the steps.
SET datestyle = ISO;
SET timezone = 'UTC';
\i sql/include/differences.sql
\i sql/include/state_size.sql
CREATE TABLE pclicks (k int, ts timestamptz, v int);
SELECT name, windowing.create_pipeline(name, 'pclicks', 'ts', '{k}', windowing.tumbling('1 minute'),
    'count(*) AS n, sum(v) AS total', max_out_of_orderness => '20 seconds',
    allowed_lateness => '1 minute', late_table => name || '_late', start => false,
    retention => 'keep', parallelism => p) > 0 AS created
FROM (VALUES ('pt1', 1), ('pt3', 3)) v(name, p);
SELECT name, windowing.create_pipeline(name, 'pclicks', 'ts', '{k}', windowing.session('45 seconds'),
    'count(*) AS n, sum(v) AS total', max_out_of_orderness => '20 seconds',
    late_table => name || '_late', start => false, parallelism => p) > 0 AS created
FROM (VALUES ('ps1', 1), ('ps2', 2)) v(name, p);
SELECT name, windowing.create_pipeline(name, 'pclicks', 'ts', '{k}',
    windowing.hopping('2 minutes', '30 seconds'), 'count(*) AS n, sum(v) AS total',
    max_out_of_orderness => '20 seconds', emit => 'append', late_table => name || '_late',
    start => false, parallelism => p) > 0 AS created
FROM (VALUES ('ph1', 1), ('ph4', 4)) v(name, p);
-- downstream of a pipeline of parts: the least of its parts' watermarks
SELECT p, windowing.create_pipeline('pdown' || p, 'ph' || p || '_results', 'window_time', '{}',
    windowing.tumbling('10 minutes'), 'sum(total) AS total, count(*) AS windows',
    watermark_from => 'ph' || p, emit => 'append', start => false, retention => 'keep') > 0 AS created
FROM (VALUES (1), (4)) v(p);
SELECT name, windowing.create_pipeline(name, 'pclicks', 'ts', '{k}', windowing.counting(5, 2),
    'count(*) AS n, sum(v) AS total', start => false, parallelism => p) > 0 AS created
FROM (VALUES ('pc1', 1), ('pc2', 2)) v(name, p);

-- every part has a row of its own, the definition the same
SELECT name, part, parallelism, state, steps, watermark
FROM windowing.pipeline WHERE name IN ('pt1', 'pt3') ORDER BY name, part;
SELECT name, parallelism FROM windowing.pipelines WHERE source = 'pclicks'::regclass ORDER BY name;
-- which part steps which key group: runs of consecutive groups
SELECT p AS part, min(g) AS first_group, max(g) AS last_group, count(*) AS groups
FROM generate_series(0, 127) g, windowing._key_part(g, 128, 3) p GROUP BY p ORDER BY p;

-- 2000 rows of 40 keys, out of order by up to a minute, so some come late
INSERT INTO pclicks
SELECT i % 40, '2026-03-01 00:00'::timestamptz + i * interval '2 seconds'
       - ((i * 7919) % 31) * interval '2 seconds', i % 13
FROM generate_series(1, 2000) i;
DO $$
DECLARE
    n text;
BEGIN
    FOREACH n IN ARRAY ARRAY['pt1', 'pt3', 'ps1', 'ps2', 'ph1', 'ph4', 'pdown1', 'pdown4', 'pc1', 'pc2'] LOOP
        WHILE windowing.process(n, CASE WHEN n LIKE '%1' THEN 1000 ELSE 333 END) > 0 LOOP END LOOP;
    END LOOP;
END $$;

-- each part read every row and moved its watermark over all of them; the
-- windows and late rows are split between the parts
SELECT name, part, rows_consumed, watermark, windows_fired, late_routed, open_windows
FROM windowing.pipeline_stats WHERE name IN ('pt1', 'pt3') ORDER BY name, part;
SELECT name, sum(windows_fired) AS fired, sum(late_routed) AS late,
       sum(open_windows) AS open, count(DISTINCT watermark) AS watermarks
FROM windowing.pipeline_stats WHERE name ~ '^p(t|s|h|c|down)[0-9]$' GROUP BY name ORDER BY name;
SELECT (SELECT count(*) FROM windowing.open_windows('pt1')) AS t1_open_windows,
       (SELECT count(*) FROM windowing.open_windows('pt3')) AS t3_open_windows;
SELECT pg_temp.differences('pt1_results', 'pt3_results',
                           'k, window_start, window_end, n, total, fire_count, is_final') AS results;

-- a change of parallelism: every part reads the queue up to one snapshot,
-- then the key groups and their windows change hands
INSERT INTO pclicks
SELECT i % 40, '2026-03-01 01:06'::timestamptz + i * interval '2 seconds'
       - ((i * 13) % 29) * interval '2 seconds', i % 11
FROM generate_series(1, 300) i;
SELECT windowing.process(n, 100) FROM unnest(ARRAY['pt3', 'ps2', 'ph4', 'pc2']) n;
SELECT windowing.alter_pipeline(n, parallelism => p)
FROM (VALUES ('pt3', 2), ('ps2', 3), ('ph4', 1), ('pc2', 4)) v(n, p);
SELECT s.name, s.part, p.parallelism, s.rows_consumed, s.watermark, p.tick_hi IS NULL AS tick_closed
FROM windowing.pipeline_stats s JOIN windowing.pipeline p USING (name, part)
WHERE s.name IN ('pt3', 'ph4') ORDER BY s.name, s.part;
SELECT name, parallelism FROM windowing.pipelines WHERE name IN ('pt3', 'ps2', 'ph4', 'pc2') ORDER BY name;
-- the windows are where their keys' groups are stepped now, none lost
SELECT name, count(DISTINCT part) AS parts, sum(open_windows) AS open_windows,
       sum(windows_fired) AS fired
FROM windowing.pipeline_stats WHERE name IN ('pt3', 'ps2', 'ph4', 'pc2') GROUP BY name ORDER BY name;
SELECT count(*) AS windows,
       count(*) FILTER (WHERE windowing._key_part(w.key_group, p.key_groups, p.parallelism) <> p.part)
           AS misplaced
FROM windowing.window_state w JOIN windowing.pipeline p ON p.id = w.pipeline_id
WHERE p.name IN ('pt3', 'ps2', 'ph4', 'pc2');
-- state_size followed the windows to their parts
SELECT pg_temp.state_size_wrong() AS wrong_sizes;
INSERT INTO pclicks
SELECT i % 40, '2026-03-01 01:16'::timestamptz + i * interval '2 seconds'
       - ((i * 17) % 23) * interval '2 seconds', i % 5
FROM generate_series(1, 300) i;
SELECT windowing.process(n) FROM unnest(ARRAY['pt1', 'ps1', 'ph1', 'pc1']) n;
SELECT windowing.process(n, 150) FROM unnest(ARRAY['pt3', 'ps2', 'ph4', 'pc2']) n;
-- the same parallelism again changes nothing
CREATE TEMP VIEW pt3_cursor AS
SELECT id, part, steps, tick_lo::text, tick_hi::text, last_seq, watermark
FROM windowing.pipeline WHERE name = 'pt3';
CREATE TEMP TABLE before AS SELECT * FROM pt3_cursor;
SELECT windowing.alter_pipeline('pt3', parallelism => 2);
SELECT count(*) AS parts, count(*) FILTER (WHERE tick_hi IS NOT NULL) AS mid_tick,
       (SELECT count(*) FROM (SELECT * FROM before EXCEPT SELECT * FROM pt3_cursor) c) AS changed
FROM pt3_cursor;
-- and back, from the middle of a tick
SELECT windowing.alter_pipeline(n, parallelism => p)
FROM (VALUES ('pt3', 5), ('ps2', 2), ('ph4', 4), ('pc2', 1)) v(n, p);
SELECT name, count(*) AS parts, min(tick_lo::text) = max(tick_lo::text) AS one_cursor
FROM windowing.pipeline WHERE name IN ('pt3', 'ps2', 'ph4', 'pc2') GROUP BY name ORDER BY name;

-- a change rolled back leaves the parts as they were; one prepared and
-- committed is made
CREATE TEMP TABLE parts_before AS
SELECT name, part, id, steps, tick_lo::text, watermark FROM windowing.pipeline WHERE name = 'pt3';
BEGIN;
SELECT windowing.alter_pipeline('pt3', parallelism => 2);
ROLLBACK;
BEGIN;
SAVEPOINT s;
SELECT windowing.alter_pipeline('pt3', parallelism => 4);
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT count(*) AS parts,
       (SELECT count(*) FROM (SELECT name, part, id, steps, tick_lo::text, watermark
                              FROM windowing.pipeline WHERE name = 'pt3'
                              EXCEPT SELECT * FROM parts_before) c) AS changed
FROM windowing.pipeline WHERE name = 'pt3';
BEGIN;
SELECT windowing.alter_pipeline('pt3', parallelism => 4);
PREPARE TRANSACTION 'parts';
COMMIT PREPARED 'parts';
SELECT windowing.alter_pipeline('pt3', parallelism => 5);
SELECT count(*) AS parts FROM windowing.pipeline WHERE name = 'pt3';
SELECT pg_temp.state_size_wrong() AS wrong_sizes;

-- more rows, a watermark given, then the end of input
INSERT INTO pclicks
SELECT i % 40, '2026-03-01 01:00'::timestamptz + i * interval '3 seconds'
       - ((i * 31) % 17) * interval '4 seconds', i % 7
FROM generate_series(1, 500) i;
SELECT windowing.process(n) FROM unnest(ARRAY['pt1', 'pt3', 'ps1', 'ps2', 'ph1', 'ph4', 'pc1', 'pc2']) n;
SELECT windowing.advance_watermark(n, '2026-03-01 01:20') FROM unnest(ARRAY['pt1', 'pt3']) n;
SELECT name, part, watermark FROM windowing.pipeline_stats WHERE name = 'pt3' ORDER BY part;
SELECT windowing.flush(n) FROM unnest(ARRAY['pt1', 'pt3', 'ps1', 'ps2', 'ph1', 'ph4', 'pc1', 'pc2']) n;
SELECT windowing.process(n), windowing.flush(n) FROM unnest(ARRAY['pdown1', 'pdown4']) n;
SELECT a, b,
       pg_temp.differences(a || '_results', b || '_results', cols) AS results,
       CASE WHEN a <> 'pc1' THEN pg_temp.differences(a || '_late', b || '_late',
           'event_time, watermark, reason, missed_windows, row_data::text') END AS late_rows
FROM (VALUES ('pt1', 'pt3', 'k, window_start, window_end, n, total, fire_count, is_final'),
             ('ps1', 'ps2', 'k, window_start, window_end, n, total, fire_count, is_final'),
             ('ph1', 'ph4', 'k, window_start, window_end, n, total'),
             ('pdown1', 'pdown4', 'window_start, window_end, total, windows'),
             ('pc1', 'pc2', 'k, window_start, window_end, n, total')) v(a, b, cols);
SELECT count(*) AS windows, sum(n) AS rows_in_windows FROM pt3_results;
SELECT reason, count(*) FROM pt3_late GROUP BY reason ORDER BY reason;
SELECT window_start, total, windows FROM pdown4_results ORDER BY window_start LIMIT 3;

-- pause, resume and drop act on every part
SELECT windowing.pause_pipeline('ps2');
SELECT part, state FROM windowing.pipeline WHERE name = 'ps2' ORDER BY part;
SELECT windowing.resume_pipeline('ps2');
SELECT windowing.pause_pipeline('ps2');
SELECT part, state FROM windowing.pipeline WHERE name = 'ps2' ORDER BY part;
SELECT windowing.drop_pipeline('ps2', true);
SELECT count(*) AS rows_left FROM windowing.pipeline WHERE name = 'ps2';
SELECT count(*) AS state_left FROM windowing.window_state w
WHERE NOT EXISTS (SELECT FROM windowing.pipeline p WHERE p.id = w.pipeline_id);

-- what a pipeline of parts refuses
SELECT windowing.create_pipeline('bad', 'pclicks', 'ts', '{k}', windowing.tumbling('1 minute'),
    parallelism => 0);
SELECT windowing.create_pipeline('bad', 'pclicks', 'ts', '{k}', windowing.tumbling('1 minute'),
    parallelism => 129);
SELECT windowing.create_pipeline('bad', 'pclicks', 'ts', '{k}', windowing.tumbling('1 minute'),
    parallelism => NULL);
SELECT windowing.rebuild('pt3');
SELECT windowing.alter_pipeline('pt3', parallelism => 0);
SELECT windowing.alter_pipeline('nope', parallelism => 2);
SELECT windowing._key_part(128, 128, 2);
-- the queue's pipelines, each once
SELECT queue, pipelines FROM windowing.queues
WHERE queue::text IN ('pclicks', 'ph1_results', 'ph4_results') ORDER BY queue::text;
-- a catalog row of a part that does not fit its pipeline
UPDATE windowing.pipeline SET part = 7 WHERE name = 'pt3' AND part = 2;
