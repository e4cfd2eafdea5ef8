-- A step reads its queue straight from the heap through the arrival-number
-- index, unless the queue is one the direct scan would read differently
-- from SQL (inheritance children, row security, no usable index).  Either
-- way every row counts once, in arrival order, with the aggregates' inputs
-- evaluated as SQL evaluates them.
\i sql/include/differences.sql
CREATE TABLE rd_direct (k int, ts bigint, v int, note text);
CREATE TABLE rd_child_parent (k int, ts bigint, v int, note text);
CREATE TABLE rd_rls (k int, ts bigint, v int, note text);
CREATE TABLE rd_desc (k int, ts bigint, v int, note text);
SELECT windowing.create_pipeline(q, q, 'ts', '{k}', windowing.tumbling('10 milliseconds'),
    'count(*) AS n, sum(v) AS total, max(v * 2 + length(note)) AS expr, '
    'windowing.collect(upper(note)) AS notes',
    max_out_of_orderness => '2 milliseconds', allowed_lateness => '5 milliseconds',
    start => false, retention => 'consume')
FROM unnest(ARRAY['rd_direct', 'rd_child_parent', 'rd_rls', 'rd_desc']) q;
-- what the direct scan leaves to SQL
CREATE TABLE rd_child () INHERITS (rd_child_parent);
ALTER TABLE rd_rls ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
CREATE POLICY everything ON rd_rls USING (true);
DROP INDEX rd_desc_windowing_seq_idx;
CREATE INDEX ON rd_desc (windowing_seq DESC);

CREATE FUNCTION pg_temp.produce(round int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    q text;
BEGIN
    FOREACH q IN ARRAY ARRAY['rd_direct', 'rd_child_parent', 'rd_rls', 'rd_desc'] LOOP
        EXECUTE format('INSERT INTO %I (k, ts, v, note) '
                       'SELECT i %% 3, (i * 7919) %% 23 + i * 2 + $1 * 100, i, '
                       'CASE WHEN i %% 5 <> 0 THEN ''n'' || i END '
                       'FROM generate_series(1, 50) i', q) USING round;
    END LOOP;
END
$$;
CREATE FUNCTION pg_temp.step(max_rows int) RETURNS SETOF bigint LANGUAGE sql AS $$
    SELECT windowing.process(q, NULLIF(max_rows, 0))
    FROM unnest(ARRAY['rd_direct', 'rd_child_parent', 'rd_rls', 'rd_desc']) q;
$$;
-- several ticks, some cut short by max_rows, one with rows rolled back
SELECT pg_temp.produce(0);
SELECT pg_temp.step(17);
SELECT pg_temp.step(0);
SELECT pg_temp.produce(1);
BEGIN;
SELECT pg_temp.produce(2);
ROLLBACK;
SELECT pg_temp.step(30);
SELECT pg_temp.produce(3);
SELECT pg_temp.step(0);
SELECT pg_temp.produce(0);
SELECT pg_temp.step(0);
SELECT windowing.flush(q)
FROM unnest(ARRAY['rd_direct', 'rd_child_parent', 'rd_rls', 'rd_desc']) q;

SELECT name, rows_consumed, windows_fired, late_routed FROM windowing.pipeline_stats
WHERE name LIKE 'rd\_%' ORDER BY name;
SELECT k, window_start, n, total, expr, notes, fire_count FROM rd_direct_results
WHERE window_start IN (100, 110) ORDER BY 2, 1;
SELECT pg_temp.differences('rd_direct_results', q || '_results',
       'k, window_start, window_end, n, total, expr, notes, fire_count, is_final') AS differences
FROM unnest(ARRAY['rd_child_parent', 'rd_rls', 'rd_desc']) q;
SELECT pg_temp.differences('rd_direct_late', q || '_late',
       'event_time, watermark, reason, missed_windows') AS differences
FROM unnest(ARRAY['rd_child_parent', 'rd_rls', 'rd_desc']) q;

-- the same rows from one big step
CREATE TABLE rd_once (k int, ts bigint, v int, note text);
SELECT windowing.create_pipeline('rd_once', 'rd_once', 'ts', '{k}', windowing.tumbling('10 milliseconds'),
    'count(*) AS n, sum(v) AS total, max(v * 2 + length(note)) AS expr, '
    'windowing.collect(upper(note)) AS notes',
    max_out_of_orderness => '2 milliseconds', allowed_lateness => '5 milliseconds',
    start => false, retention => 'consume');
INSERT INTO rd_once (k, ts, v, note)
    SELECT k, ts, v, note FROM rd_direct ORDER BY windowing_seq;
SELECT windowing.process('rd_once');
SELECT windowing.flush('rd_once');
SELECT pg_temp.differences('rd_direct_results', 'rd_once_results',
       'k, window_start, window_end, n, total, expr, notes, fire_count, is_final') AS differences;

-- a queue bigger than a quarter of shared buffers is read through a ring of
-- buffers, as a sequential scan reads it
CREATE TABLE rd_big (k int, ts bigint, v int, note text);
CREATE TABLE rd_big_rls (k int, ts bigint, v int, note text);
SELECT windowing.create_pipeline(q, q, 'ts', '{k}', windowing.tumbling('100 milliseconds'),
    'count(*) AS n, sum(v) AS total', max_out_of_orderness => '5 milliseconds', start => false, retention => 'consume')
FROM unnest(ARRAY['rd_big', 'rd_big_rls']) q;
ALTER TABLE rd_big_rls ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
CREATE POLICY everything ON rd_big_rls USING (true);
INSERT INTO rd_big (k, ts, v, note)
    SELECT i % 7, i + (i * 7) % 13, i, repeat('x', i % 50) FROM generate_series(1, 30000) i;
INSERT INTO rd_big_rls (k, ts, v, note) SELECT k, ts, v, note FROM rd_big ORDER BY windowing_seq;
SELECT pg_relation_size('rd_big') / 8192 > setting::int / 4 AS bigger_than_a_quarter
FROM pg_settings WHERE name = 'shared_buffers';
SELECT windowing.process(q), windowing.flush(q) FROM unnest(ARRAY['rd_big', 'rd_big_rls']) q;
SELECT count(*), sum(n), sum(total) FROM rd_big_results;
SELECT pg_temp.differences('rd_big_results', 'rd_big_rls_results',
       'k, window_start, n, total, fire_count') AS differences;
SELECT count(*) AS late, pg_temp.differences('rd_big_late', 'rd_big_rls_late', 'event_time, watermark, reason') AS differences
FROM rd_big_late;

-- a whole-row input
CREATE TABLE rd_whole (k int, ts bigint, v int);
SELECT windowing.create_pipeline('rd_whole', 'rd_whole', 'ts', '{k}', windowing.tumbling('10 milliseconds'),
    'windowing.collect(rd_whole) AS rows', start => false, retention => 'consume');
INSERT INTO rd_whole VALUES (1, 1, 10), (1, 4, 11), (2, 5, 12), (1, 12, 13);
SELECT windowing.process('rd_whole');
SELECT windowing.flush('rd_whole');
SELECT k, window_start, (SELECT string_agg(format('%s/%s/%s', r.k, r.ts, r.v), ' ')
                         FROM unnest(rows) r) AS rows
FROM rd_whole_results ORDER BY 2, 1;

-- A tick of at least windowing.read_helper_rows rows is read by a helper
-- process while the step works on the rows: the same results as the step
-- reading for itself, also when a step's max_rows stops it before the
-- helper's end, and when the step holds the queue's strongest lock.  The
-- helper sends the columns a step reads where the aggregates' inputs are
-- columns (rd_help), else the rows (rd_help_rows, whose input is an
-- expression).  test/t/080_queue_helper.pl checks that helpers run.
CREATE TABLE rd_help (k int, ts bigint, v int, note text);
SELECT windowing.create_pipeline(p, 'rd_help', 'ts', '{k}', windowing.tumbling('100 milliseconds'),
    'count(*) AS n, sum(v) AS total, max(' || note || ') AS note',
    max_out_of_orderness => '5 milliseconds', start => false, retention => 'consume')
FROM (VALUES ('rd_help_self', 'note'), ('rd_help', 'note'),
             ('rd_help_rows', 'note || ''''')) p(p, note);
INSERT INTO rd_help (k, ts, v, note)
    SELECT i % 7, i + (i * 7) % 13, i, CASE WHEN i % 11 > 0 THEN repeat('y', i % 70) || i END
    FROM generate_series(1, 30000) i;
SELECT windowing.process('rd_help_self');
SET windowing.read_helper_rows = 1000;
BEGIN;
LOCK TABLE rd_help IN ACCESS EXCLUSIVE MODE;
SELECT windowing.process('rd_help', 12000);
COMMIT;
SELECT windowing.process('rd_help', 12000);
SELECT windowing.process('rd_help', 12000);
SELECT windowing.process('rd_help');
SELECT windowing.process('rd_help_rows');
RESET windowing.read_helper_rows;
SELECT windowing.flush(p) FROM unnest(ARRAY['rd_help_self', 'rd_help', 'rd_help_rows']) p;
SELECT count(*), sum(n), sum(total), count(note) FROM rd_help_results;
SELECT p, pg_temp.differences('rd_help_self_results', p || '_results',
          'k, window_start, n, total, note, fire_count') AS differences,
       pg_temp.differences('rd_help_self_late', p || '_late',
          'event_time, watermark, reason') AS late_differences
FROM unnest(ARRAY['rd_help', 'rd_help_rows']) p;
SELECT count(*) AS late FROM rd_help_late;
-- nor for a queue new in the transaction, whose rows the helper cannot see
BEGIN;
CREATE TABLE rd_new (k int, ts bigint, v int);
SELECT windowing.create_pipeline('rd_new', 'rd_new', 'ts', '{k}', windowing.tumbling('100 milliseconds'),
    'count(*) AS n', start => false, retention => 'consume');
INSERT INTO rd_new SELECT i % 7, i, i FROM generate_series(1, 3000) i;
SET LOCAL windowing.read_helper_rows = 1;
SELECT windowing.process('rd_new');
ROLLBACK;

SELECT windowing.drop_pipeline(q, drop_tables => true)
FROM unnest(ARRAY['rd_direct', 'rd_child_parent', 'rd_rls', 'rd_desc', 'rd_once', 'rd_big',
                  'rd_big_rls', 'rd_whole', 'rd_help_self', 'rd_help', 'rd_help_rows']) q;
DROP TABLE rd_direct, rd_child_parent CASCADE;
DROP TABLE rd_rls, rd_desc, rd_once, rd_big, rd_big_rls, rd_whole, rd_help;
