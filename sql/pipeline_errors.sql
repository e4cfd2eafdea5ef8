-- A bad definition is refused at create time, with a clear error.
SET datestyle = ISO;
\set SHOW_CONTEXT never
SET timezone = 'UTC';
CREATE TABLE orders (id int, ts timestamptz, ms bigint, amount numeric, note text, at date);

-- unknown columns and unusable time columns
SELECT windowing.create_pipeline('p', 'orders', 'nope', assigner => windowing.tumbling('1 minute'), retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'at', assigner => windowing.tumbling('1 minute'), retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ts', '{nope}', windowing.tumbling('1 minute'), retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ts', '{id,id}', windowing.tumbling('1 minute'), retention => 'consume');
SELECT windowing.create_pipeline('p', 'nope', 'ts', assigner => windowing.tumbling('1 minute'), retention => 'consume');

-- assigners
SELECT windowing.create_pipeline('p', 'orders', 'ts', retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ts', assigner => windowing.tumbling('0 seconds'), retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ts', assigner => windowing.hopping('1 hour', '7 minutes', '10 minutes'), retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ts', assigner => windowing.cumulating('7 hours', '1 day'), retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ts', assigner => windowing.tumbling('1 month'), retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ts', assigner => windowing.tumbling('1 day', tz => 'Nowhere/City'), retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ms', assigner => windowing.tumbling('1.5 milliseconds'), retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ms', assigner => windowing.tumbling('1 day', tz => 'UTC'), retention => 'consume');

-- aggregates: only a select list of plain aggregate calls
SELECT windowing.create_pipeline('p', 'orders', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'count(*); DROP TABLE orders', retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'count(*) FROM pg_class', retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'amount', retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'sum(amount) + 1', retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'no_such_agg(amount)', retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'sum(amount, id)', retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'percentile_disc(ARRAY[0.5]) WITHIN GROUP (ORDER BY id)', retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'sum((SELECT 1))', retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'rank(1) WITHIN GROUP (ORDER BY id)', retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'count(*), count(id)', retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => 'count(*) AS window_end', retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ts', assigner => windowing.tumbling('1 minute'),
    aggregates => '', retention => 'consume');

-- durations and options
SELECT windowing.create_pipeline('p', 'orders', 'ts', assigner => windowing.tumbling('1 minute'),
    allowed_lateness => '-1 second', retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ts', assigner => windowing.tumbling('1 minute'),
    max_out_of_orderness => '1 month', retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ts', assigner => windowing.tumbling('1 minute'),
    emit => 'sometimes', retention => 'consume');
SELECT windowing.create_pipeline('', 'orders', 'ts', assigner => windowing.tumbling('1 minute'), retention => 'consume');

-- nothing was created by the refused calls
SELECT count(*) FROM windowing.pipeline;
SELECT attname FROM pg_attribute WHERE attrelid = 'orders'::regclass AND attnum > 0 ORDER BY attnum;

-- a good one, then the same name again
SELECT windowing.create_pipeline('p', 'orders', 'ts', '{note}', windowing.tumbling('1 minute'),
    'count(*) AS n, sum(amount) AS total, avg(amount), min(note), max(ts) AS last_at',
    start => false, retention => 'consume');
SELECT windowing.create_pipeline('p', 'orders', 'ts', assigner => windowing.tumbling('1 minute'), retention => 'consume');
\d p_results
\d p_late

-- search_path tricks: a public "sum" and "=" do not run inside the extension
CREATE FUNCTION public.sum(numeric) RETURNS numeric LANGUAGE sql AS 'SELECT 666::numeric';
CREATE FUNCTION public.evil_eq(text, text) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = text, FUNCTION = public.evil_eq);
SET search_path = public, pg_catalog;
INSERT INTO orders (id, ts, amount, note) VALUES (1, '2026-01-01 10:00:10+00', 5, 'x'),
    (2, '2026-01-01 10:00:20+00', 7, 'y'), (3, '2026-01-01 10:00:30+00', 1, 'x');
SELECT windowing.process('p');
SELECT windowing.flush('p');
SELECT note, window_start, n, total, avg, min, last_at FROM p_results ORDER BY note;
RESET search_path;

-- process and watermark arguments
SELECT windowing.process('nope');
SELECT windowing.process('p', 0);
SELECT windowing.advance_watermark('p', 5::bigint);
SELECT windowing.advance_watermark('p', 'not a time');
SELECT windowing.advance_watermark('p', 'infinity');
SELECT windowing.drop_pipeline('nope');

-- a dropped result table makes the step fail with a clear message
DROP TABLE p_results;
INSERT INTO orders (id, ts, amount, note) VALUES (4, '2026-01-01 10:05:00+00', 1, 'x');
SELECT windowing.process('p');
SELECT windowing.drop_pipeline('p', drop_tables => true);
DROP TABLE orders;
DROP FUNCTION public.sum(numeric);
DROP OPERATOR public.= (text, text);
DROP FUNCTION public.evil_eq(text, text);
