-- Bad input: rows whose event time is NULL, infinite or at the ends of its
-- type go to the late table with their reason; an aggregate that fails on a
-- row stops the step whole; odd names work or are refused at create time.
SET datestyle = ISO;
\set SHOW_CONTEXT never
SET timezone = 'UTC';

-- timestamptz: NULL, infinities, the first and last days of the type
CREATE TABLE ev (id int, ts timestamptz, v float8);
SELECT windowing.create_pipeline('ts_day', 'ev', 'ts', assigner => windowing.tumbling('1 day'),
    aggregates => 'count(*) AS n, sum(v) AS total', start => false, retention => 'consume');
SELECT windowing.create_pipeline('ts_hop', 'ev', 'ts', assigner => windowing.hopping('2 days', '1 day'),
    start => false, retention => 'consume');
SELECT windowing.create_pipeline('ts_session', 'ev', 'ts', assigner => windowing.session('1 day'),
    start => false, retention => 'consume');
INSERT INTO ev VALUES (1, NULL, 1), (2, 'infinity', 1), (3, '-infinity', 1),
    (4, '4714-11-24 00:00:00+00 BC', 1), (5, '294276-12-31 23:59:59.999999+00', 1),
    (6, '294276-12-30 12:00+00', 1), (7, '2026-01-01 12:00+00', 1);
SELECT windowing.process('ts_day'), windowing.process('ts_hop'), windowing.process('ts_session');
SELECT row_data->>'id' AS id, event_time, reason, missed_windows FROM ts_day_late ORDER BY 1;
SELECT row_data->>'id' AS id, event_time, reason, missed_windows FROM ts_hop_late ORDER BY 1;
SELECT row_data->>'id' AS id, event_time, reason FROM ts_session_late ORDER BY 1;
SELECT windowing.flush('ts_day'), windowing.flush('ts_hop'), windowing.flush('ts_session');
SELECT window_start, window_end, window_time, n, total FROM ts_day_results ORDER BY 1;
SELECT window_start, window_end, count FROM ts_hop_results ORDER BY 1;
SELECT window_start, window_end, count FROM ts_session_results ORDER BY 1;
SELECT name, watermark, rows_consumed, late_routed, late_dropped FROM windowing.pipeline_stats ORDER BY name;

-- bigint: NULL and the ends of the type, where window ends would overflow
CREATE TABLE ms (id int, ts bigint);
SELECT windowing.create_pipeline('ms_tumble', 'ms', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    allowed_lateness => '1 millisecond', start => false, retention => 'consume');
SELECT windowing.create_pipeline('ms_hop', 'ms', 'ts', assigner => windowing.hopping('10 milliseconds', '5 milliseconds'),
    start => false, retention => 'consume');
SELECT windowing.create_pipeline('ms_cumulate', 'ms', 'ts', assigner => windowing.cumulating('5 milliseconds', '10 milliseconds'),
    start => false, retention => 'consume');
SELECT windowing.create_pipeline('ms_session', 'ms', 'ts', assigner => windowing.session('10 milliseconds'),
    start => false, retention => 'consume');
INSERT INTO ms VALUES (1, NULL), (2, -9223372036854775808), (3, -9223372036854775800),
    (4, 9223372036854775807), (5, 9223372036854775790), (6, 0);
SELECT windowing.process('ms_tumble'), windowing.process('ms_hop'),
       windowing.process('ms_cumulate'), windowing.process('ms_session');
SELECT 'tumble' AS p, row_data->>'id' AS id, event_time, watermark, reason FROM ms_tumble_late
UNION ALL SELECT 'hop', row_data->>'id', event_time, watermark, reason FROM ms_hop_late
UNION ALL SELECT 'cumulate', row_data->>'id', event_time, watermark, reason FROM ms_cumulate_late
UNION ALL SELECT 'session', row_data->>'id', event_time, watermark, reason FROM ms_session_late
ORDER BY 1, 2;
SELECT windowing.flush('ms_tumble'), windowing.flush('ms_hop'),
       windowing.flush('ms_cumulate'), windowing.flush('ms_session');
SELECT 'tumble' AS p, window_start, window_end, window_time, count, is_final FROM ms_tumble_results
UNION ALL SELECT 'hop', window_start, window_end, window_time, count, is_final FROM ms_hop_results
UNION ALL SELECT 'cumulate', window_start, window_end, window_time, count, is_final FROM ms_cumulate_results
UNION ALL SELECT 'session', window_start, window_end, window_time, count, is_final FROM ms_session_results
ORDER BY 1, 2, 3;
-- watermarks at the ends of the type
SELECT windowing.advance_watermark('ms_tumble', 9223372036854775807);
SELECT windowing.advance_watermark('ms_tumble', '-9223372036854775808');
SELECT windowing.advance_watermark('ms_tumble', '9223372036854775808');
SELECT name, watermark FROM windowing.pipeline_stats WHERE name = 'ms_tumble';

-- two steps of one pipeline in one statement: the second sees the first
CREATE TABLE twice (ts bigint);
SELECT windowing.create_pipeline('twice', 'twice', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    start => false, retention => 'consume');
INSERT INTO twice VALUES (1), (2), (50);
SELECT windowing.process('twice'), windowing.flush('twice');
SELECT window_start, count FROM twice_results ORDER BY 1;
SELECT windowing.create_pipeline('twice1', 'twice', 'ts', assigner => windowing.tumbling('100 milliseconds'),
    start => false, retention => 'consume');
SELECT windowing.process('twice1', 1) FROM generate_series(1, 4);
SELECT * FROM windowing.open_windows('twice1');

-- processing time: the clock of a step must be a finite time, and a clock
-- whose windows would leave the range sends the rows to the late table
CREATE TABLE pt (v int);
SELECT windowing.create_pipeline('pt', 'pt', NULL, assigner => windowing.tumbling('1 minute'),
    start => false, retention => 'consume');
INSERT INTO pt VALUES (1);
SET windowing.clock = 'infinity';
SELECT windowing.process('pt');
SET windowing.clock = 'not a time';
SELECT windowing.process('pt');
SET windowing.clock = '294276-12-31 23:59:00+00';
SELECT windowing.process('pt');
SELECT event_time, reason FROM pt_late;
-- a clock set back does not take the watermark back: rows are late
SET windowing.clock = '2026-01-01 00:00:00+00';
INSERT INTO pt VALUES (2);
SELECT windowing.process('pt');
SELECT event_time, watermark, reason FROM pt_late ORDER BY event_time;
SELECT count(*) FROM pt_results;
RESET windowing.clock;

-- NaN, infinities and overflow inside aggregates
CREATE TABLE nums (ts bigint, f float8, n numeric, i int, b bigint);
SELECT windowing.create_pipeline('nums', 'nums', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    aggregates => 'sum(f) AS sf, avg(f) AS af, min(f) AS minf, max(f) AS maxf, sum(n) AS sn, '
                  'avg(n) AS an, sum(i) AS si, sum(b) AS sb, avg(b) AS ab, count(*) AS c',
    start => false, retention => 'consume');
INSERT INTO nums VALUES (1, 'NaN', 'NaN', 2147483647, 9223372036854775807),
    (2, 1, 1, 2147483647, 9223372036854775807),
    (11, 'Infinity', 'Infinity', 1, 1), (12, '-Infinity', 1, 1, 1),
    (21, 1e308, 1e300, 1, -9223372036854775808);
SELECT windowing.process('nums');
SELECT windowing.flush('nums');
SELECT window_start, sf, af, minf, maxf, sn, an, si, sb, ab, c FROM nums_results ORDER BY 1;
-- float8 addition overflows: the step fails whole, consuming nothing
CREATE TABLE floats (ts bigint, f float8, i int);
SELECT windowing.create_pipeline('floats', 'floats', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    aggregates => 'sum(f) AS sf, count(*) AS c', start => false, retention => 'consume');
SELECT windowing.create_pipeline('casts', 'floats', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    aggregates => 'sum(i + 1) AS s', start => false, retention => 'consume');
INSERT INTO floats VALUES (1, 1, 1), (2, 1e308, 2147483647), (3, 1e308, 2), (4, 1, 3), (15, 1, 4);
SELECT windowing.process('floats');
SELECT windowing.process('casts');
SELECT name, watermark, rows_consumed, windows_fired, steps FROM windowing.pipeline_stats
WHERE name IN ('floats', 'casts') ORDER BY name;
-- taking the rows out of the queue lets the pipelines go on
DELETE FROM floats WHERE ts IN (2, 3);
SELECT windowing.process('floats'), windowing.process('casts');
SELECT * FROM windowing.open_windows('floats');
SELECT windowing.flush('floats'), windowing.flush('casts');
SELECT window_start, sf, c FROM floats_results ORDER BY 1;
SELECT window_start, s FROM casts_results ORDER BY 1;

-- malformed aggregates are refused at create time
CREATE TABLE t (ts timestamptz, amount numeric, note text);
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'count(*) /* unterminated', retention => 'consume');
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'sum(amount', retention => 'consume');
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'sum(amount))', retention => 'consume');
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'count(*)) FROM t; DROP TABLE t; SELECT (1', retention => 'consume');
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => '(SELECT count(*) FROM pg_class)', retention => 'consume');
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'sum(amount) FILTER (WHERE amount > (SELECT 0))', retention => 'consume');
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'sum(amount) OVER ()', retention => 'consume');
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'row_number() OVER ()', retention => 'consume');
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'sum(count(*))', retention => 'consume');
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'sum(generate_series(1, 3))', retention => 'consume');
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'percentile_cont(ARRAY[0.5]) WITHIN GROUP (ORDER BY amount)', retention => 'consume');
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'sum(nope)', retention => 'consume');
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'upper(note)', retention => 'consume');
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'count(*) AS n, sum(amount) AS n', retention => 'consume');
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'sum(amount) AS windowing_seq', retention => 'consume');
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'count(*), count(*) AS count', retention => 'consume');
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => ';', retention => 'consume');
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'count(*) AS n, *', retention => 'consume');
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'sum((SELECT amount FROM public.t LIMIT 1))', retention => 'consume');
SELECT windowing.create_pipeline('a', 't', 'ts', '{amount}', windowing.tumbling('1 minute'),
    aggregates => 'count(*) AS amount', emit => 'append', retention => 'consume');
-- comments are only comments
SELECT windowing.create_pipeline('comment', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'count(*) /* one */ AS n -- two', start => false, retention => 'consume');
SELECT aggregates FROM windowing.pipelines WHERE name = 'comment';
\d comment_results
-- volatile inputs are allowed: a step reads each row once
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'count(random()) AS n', start => false, retention => 'consume');
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'count(*) AS n', start => false, retention => 'consume');
-- names are compared exactly
SELECT windowing.create_pipeline('a', 't', 'ts', assigner => windowing.tumbling('1 minute'), retention => 'consume');
SELECT windowing.create_pipeline('A', 't', 'ts', assigner => windowing.tumbling('1 minute'), start => false, retention => 'consume');
SELECT windowing.create_pipeline(NULL, 't', 'ts', assigner => windowing.tumbling('1 minute'), retention => 'consume');
SELECT name, result_table, late_table FROM windowing.pipelines WHERE source = 't'::regclass ORDER BY name;

-- odd identifiers: quotes, spaces, unicode, 63-byte names
CREATE SCHEMA "odd schema";
CREATE TABLE "odd schema"."odd ""queue"" é" ("event time" timestamptz, "the ""key""" text, "clé" int,
    "c23456789012345678901234567890123456789012345678901234567890123" int);
SELECT windowing.create_pipeline('odd "pipe" é', '"odd schema"."odd ""queue"" é"', 'event time',
    '{"the \"key\"", clé, c23456789012345678901234567890123456789012345678901234567890123}',
    windowing.tumbling('1 minute'),
    'count(*) AS "n ""rows""", sum("clé") AS "Σ", '
    'max(c23456789012345678901234567890123456789012345678901234567890123) AS m',
    start => false, retention => 'consume');
INSERT INTO "odd schema"."odd ""queue"" é" VALUES ('2026-01-01 00:00:01+00', 'k "1"', 1, 10),
    ('2026-01-01 00:00:02+00', 'k "1"', 2, 20), (NULL, 'k', 3, 30);
SELECT windowing.process('odd "pipe" é');
SELECT * FROM windowing.open_windows('odd "pipe" é') ORDER BY key->>'clé';
SELECT windowing.flush('odd "pipe" é');
SELECT "the ""key""", "clé", window_start, "n ""rows""", "Σ", m FROM "odd schema"."odd ""pipe"" é_results";
SELECT reason, row_data FROM "odd schema"."odd ""pipe"" é_late";
-- columns named like the aliases of the extension's queries
CREATE TABLE aliases (ts bigint, q int, u int, r int, w int);
SELECT windowing.create_pipeline('aliases', 'aliases', 'ts', '{q}', windowing.tumbling('10 milliseconds'),
    'sum(u) AS u, sum(r) AS r, sum(w) AS w', start => false, retention => 'consume');
INSERT INTO aliases VALUES (NULL, 1, 2, 3, 4), (1, 1, 2, 3, 4), (2, 1, 2, 3, 4);
SELECT windowing.process('aliases'), windowing.flush('aliases');
SELECT q, window_start, u, r, w FROM aliases_results;
SELECT reason, row_data FROM aliases_late;

-- long pipeline names: the tables' names must fit, not be cut
SELECT windowing.create_pipeline(repeat('p', 55), 't', 'ts', assigner => windowing.tumbling('1 minute'),
    start => false, retention => 'consume');
SELECT windowing.create_pipeline(repeat('p', 56), 't', 'ts', assigner => windowing.tumbling('1 minute'),
    start => false, retention => 'consume');
SELECT windowing.create_pipeline(repeat('é', 28), 't', 'ts', assigner => windowing.tumbling('1 minute'),
    start => false, retention => 'consume');
SELECT windowing.create_pipeline(repeat('p', 70), 't', 'ts', assigner => windowing.tumbling('1 minute'),
    result_table => 'long_results', late_table => 'long_late', start => false, retention => 'consume');
SELECT length(name), result_table, late_table FROM windowing.pipelines
WHERE name LIKE 'ppp%' ORDER BY 1;
-- with upsert, keys must be told apart by the result table as by the
-- pipeline: by their bytes
CREATE TABLE keyed (ts bigint, n numeric, f float8, i interval, j json, a int[], s text,
    d date, c text COLLATE "C");
SELECT windowing.create_pipeline('keyed', 'keyed', 'ts', '{n}', windowing.tumbling('10 milliseconds'), retention => 'consume');
SELECT windowing.create_pipeline('keyed', 'keyed', 'ts', '{s,f}', windowing.tumbling('10 milliseconds'), retention => 'consume');
SELECT windowing.create_pipeline('keyed', 'keyed', 'ts', '{i}', windowing.tumbling('10 milliseconds'), retention => 'consume');
SELECT windowing.create_pipeline('keyed', 'keyed', 'ts', '{j}', windowing.tumbling('10 milliseconds'), retention => 'consume');
SELECT windowing.create_pipeline('keyed', 'keyed', 'ts', '{a}', windowing.tumbling('10 milliseconds'), retention => 'consume');
SELECT windowing.create_pipeline('keyed', 'keyed', 'ts', '{s,d,c}', windowing.tumbling('10 milliseconds'),
    start => false, retention => 'consume');
-- with append every firing is its own row anyway
SELECT windowing.create_pipeline('keyed_all', 'keyed', 'ts', '{n,f,j,a}', windowing.tumbling('10 milliseconds'),
    emit => 'append', start => false, retention => 'consume');
INSERT INTO keyed VALUES (1, 1.0, 0, '1 day', '{"a":1}', '{1}', 'x', '2026-01-01', 'x'),
    (2, 1.00, '-0', '24 hours', '{"a":1}', '{1}', 'x', '2026-01-01', 'x'), (12, 2, 0, NULL, NULL, NULL, NULL, NULL, NULL);
SELECT windowing.process('keyed'), windowing.process('keyed_all');
SELECT s, d, c, window_start, count FROM keyed_results ORDER BY window_start;
SELECT n, f, j, a, window_start, count FROM keyed_all_results ORDER BY window_start, n::text, f::text;

-- a queue must outlive its session, and its queue columns must be ours
CREATE TEMP TABLE tmp_queue (ts bigint);
SELECT windowing.create_pipeline('tmp', 'tmp_queue', 'ts', assigner => windowing.tumbling('1 minute'), retention => 'consume');
CREATE TABLE own_seq (ts bigint, windowing_seq text);
SELECT windowing.create_pipeline('own', 'own_seq', 'ts', assigner => windowing.tumbling('1 minute'), retention => 'consume');
ALTER TABLE own_seq DROP COLUMN windowing_seq, ADD COLUMN windowing_xid bigint;
SELECT windowing.create_pipeline('own', 'own_seq', 'ts', assigner => windowing.tumbling('1 minute'), retention => 'consume');
SELECT count(*) FROM windowing.pipelines WHERE name IN ('tmp', 'own');

-- the late table may be left out: late rows are counted, not kept
SELECT windowing.create_pipeline('nolate', 't', 'ts', assigner => windowing.tumbling('1 minute'),
    late_table => '', start => false, retention => 'consume');
INSERT INTO t VALUES (NULL, 1, 'x'), ('infinity', 2, 'y');
SELECT windowing.process('nolate');
SELECT late_routed, late_dropped FROM windowing.pipeline_stats WHERE name = 'nolate';

SELECT windowing.drop_pipeline(name, drop_tables => true) FROM windowing.pipelines;
DROP TABLE ev, ms, twice, own_seq, aliases, pt, nums, floats, t, keyed;
DROP SCHEMA "odd schema" CASCADE;
