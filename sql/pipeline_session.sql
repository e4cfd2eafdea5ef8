-- Session windows in pipelines: merging like Flink's MergingWindowSet.
SET datestyle = ISO;
SET timezone = 'UTC';
\set SHOW_CONTEXT never

-- Seed 000 §5.3: gap 3 s, events at 1, 2, 10, 7, 20 s: [1,5), [7,13),
-- [20,23); the late 7 touches [10,13) at 10 and merges into [7,13).
CREATE TABLE visits (who text, sec int, ts timestamptz);
SELECT windowing.create_pipeline('sess', 'visits', 'ts', '{who}', windowing.session('3 seconds'),
    'count(*) AS n, sum(sec) AS secs', start => false, retention => 'consume');
SELECT windowing.create_pipeline('sess_stream', 'visits', 'ts', '{who}', windowing.session('3 seconds'),
    'count(*) AS n, sum(sec) AS secs', emit => 'append', start => false, retention => 'consume');
INSERT INTO visits SELECT 'ann', s, '2026-01-01'::timestamptz + s * interval '1 second'
FROM unnest(ARRAY[1, 2, 10, 7, 20]) s;
SELECT windowing.process('sess'), windowing.process('sess_stream');
SELECT * FROM windowing.open_windows('sess');
SELECT windowing.flush('sess'), windowing.flush('sess_stream');
SELECT who, window_start, window_end, window_time, n, secs, fire_count, is_final
FROM sess_results ORDER BY window_start;
SELECT count(*) = 3 AS same_stream FROM (
  SELECT who, window_start, window_end, n, secs FROM sess_results
  INTERSECT SELECT who, window_start, window_end, n, secs FROM sess_stream_results) s;

-- A late row bridges two fired sessions (allowed lateness 10 s, explicit
-- watermarks): upsert keeps only the merged session; append keeps the
-- stream, with the merged session as a new firing.
CREATE TABLE clicks (who text, sec int, ts timestamptz);
SELECT windowing.create_pipeline('bridge', 'clicks', 'ts', '{who}', windowing.session('3 seconds'),
    'count(*) AS n, sum(sec) AS secs', max_out_of_orderness => NULL,
    allowed_lateness => '10 seconds', start => false, retention => 'consume');
SELECT windowing.create_pipeline('bridge_stream', 'clicks', 'ts', '{who}', windowing.session('3 seconds'),
    'count(*) AS n, sum(sec) AS secs', max_out_of_orderness => NULL,
    allowed_lateness => '10 seconds', emit => 'append', start => false, retention => 'consume');
INSERT INTO clicks VALUES ('bob', 1, '2026-01-01 00:00:01+00'), ('bob', 10, '2026-01-01 00:00:10+00'),
                          ('eve', 2, '2026-01-01 00:00:02+00');
SELECT windowing.process('bridge'), windowing.process('bridge_stream');
SELECT windowing.advance_watermark('bridge', '2026-01-01 00:00:13+00'),
       windowing.advance_watermark('bridge_stream', '2026-01-01 00:00:13+00');
SELECT who, window_start, window_end, n, secs, fire_count FROM bridge_results ORDER BY who, window_start;
-- all three fired; late rows: 5 s opens [5,8), touching neither, 4 s then
-- bridges [1,4) and [5,8), 7 s bridges that with [10,13): one session
-- [1,13) of 5 rows, firing at once since the watermark is past its end
INSERT INTO clicks VALUES ('bob', 5, '2026-01-01 00:00:05+00'), ('bob', 4, '2026-01-01 00:00:04+00'),
                          ('bob', 7, '2026-01-01 00:00:07+00');
SELECT windowing.process('bridge'), windowing.process('bridge_stream');
SELECT who, window_start, window_end, n, secs, fire_count, is_final FROM bridge_results ORDER BY who, window_start;
SELECT who, window_start, window_end, n, secs, fire_count FROM bridge_stream_results ORDER BY fired_at, who, window_end, window_start;
SELECT windowing.flush('bridge');
SELECT who, window_start, window_end, n, is_final FROM bridge_results ORDER BY who, window_start;
-- past cleanup a row touching nothing is late; the late table says which window
INSERT INTO clicks VALUES ('bob', 0, '2026-01-01 00:00:00+00');
SELECT windowing.process('bridge');
SELECT event_time, reason, missed_windows FROM bridge_late;

-- Dynamic gap: each row's gap from a column.
CREATE TABLE reads (reader text, ts timestamptz, linger interval);
SELECT windowing.create_pipeline('reading', 'reads', 'ts', '{reader}', windowing.session_dynamic('linger'),
    'count(*) AS pages', start => false, retention => 'consume');
INSERT INTO reads VALUES ('kim', '2026-01-01 10:00+00', '10 minutes'), ('kim', '2026-01-01 10:05+00', '30 minutes'),
                         ('kim', '2026-01-01 10:40+00', '10 minutes'), ('kim', '2026-01-01 10:55+00', '5 minutes'),
                         ('kim', '2026-01-01 11:30+00', NULL), ('kim', '2026-01-01 11:40+00', '-1 minute');
SELECT windowing.process('reading');
SELECT windowing.flush('reading');
SELECT reader, window_start, window_end, pages FROM reading_results ORDER BY window_start;
SELECT event_time, reason FROM reading_late ORDER BY event_time;

-- The same windows as the sessions() aggregate over the same rows.
SELECT count(*) AS differences FROM (
  (SELECT window_start, window_end FROM reading_results
   EXCEPT SELECT (s).window_start, (s).window_end
   FROM (SELECT unnest(windowing.sessions(ts, linger)) AS s FROM reads
         WHERE linger > interval '0') x)) d;

-- Many sessions per key kept alive by a long allowed lateness, rows in
-- random order, consumed in steps of 97 rows (each step loads its state
-- back, in no particular order): the same sessions, with the same rows, as
-- the sessions() aggregate over all of them.
CREATE TABLE many (who int, ts timestamptz, v int);
SELECT windowing.create_pipeline('many', 'many', 'ts', '{who}', windowing.session('1 minute'),
    'count(*) AS n, sum(v) AS total', max_out_of_orderness => NULL,
    allowed_lateness => '100 days', start => false, retention => 'consume');
SELECT setseed(0.25);
INSERT INTO many
SELECT g % 3, '2026-01-01'::timestamptz + (random() * 100000)::int * interval '1 second', g
FROM generate_series(1, 2000) g ORDER BY random();
SELECT sum(n) FROM (SELECT windowing.process('many', 97) AS n FROM generate_series(1, 25)) s;
SELECT windowing.flush('many');
WITH expected AS (
  SELECT m.who, s.window_start, s.window_end, count(*) AS n, sum(m.v) AS total
  FROM (SELECT who, unnest(windowing.sessions(ts, interval '1 minute')) AS s
        FROM many GROUP BY who) x,
       LATERAL (SELECT (x.s).window_start, (x.s).window_end) s,
       many m
  WHERE m.who = x.who AND m.ts >= s.window_start AND m.ts < s.window_end
  GROUP BY 1, 2, 3)
SELECT (SELECT count(*) FROM expected) AS sessions,
       (SELECT count(*) FROM ((SELECT who, window_start, window_end, n, total FROM many_results
                               EXCEPT SELECT * FROM expected)
                              UNION ALL (SELECT * FROM expected
                                         EXCEPT SELECT who, window_start, window_end, n, total
                                         FROM many_results)) d) AS differences;

-- Sessions need aggregates that can combine states, and a gap of type interval.
CREATE AGGREGATE plain_sum(int) (sfunc = int4pl, stype = int, initcond = '0');
SELECT windowing.create_pipeline('bad', 'clicks', 'ts', '{who}', windowing.session('3 seconds'),
    'public.plain_sum(sec)', retention => 'consume');
SELECT windowing.create_pipeline('bad', 'reads', 'ts', '{reader}', windowing.session_dynamic('reader'), retention => 'consume');
SELECT windowing.create_pipeline('bad', 'reads', 'ts', '{reader}', windowing.session_dynamic('nope'), retention => 'consume');
SELECT windowing.create_pipeline('bad', 'reads', 'ts', '{reader}', windowing.session('0 seconds'), retention => 'consume');
DROP AGGREGATE plain_sum(int);

SELECT windowing.drop_pipeline(name, drop_tables => true) FROM windowing.pipelines;
DROP TABLE visits, clicks, reads, many;
