-- Early firing when a column moves (Flink's DeltaTrigger before the
-- window's end): 'early when <column> moves more than <threshold>'.
-- Hand-worked, on bigint time (milliseconds), tumbling 100 ms windows.
\set SHOW_CONTEXT never
CREATE TABLE dticks (sym text, ts bigint, price numeric);
-- (create_pipeline prints ids that depend on the tests before this one)
CREATE FUNCTION pg_temp.pipeline(name text, trig text, emit text DEFAULT 'append')
RETURNS void LANGUAGE sql AS $$
    SELECT NULL::void FROM windowing.create_pipeline(name, 'dticks', 'ts', '{sym}',
        windowing.tumbling('100 milliseconds'), 'count(*) AS n, min(price) AS lo, max(price) AS hi',
        allowed_lateness => '50 milliseconds', emit => emit, trigger => trig,
        start => false, retention => 'keep')
$$;
\i sql/include/drain.sql

-- Rows, in arrival order, and what the trigger makes of them:
--   a 1 (100): the window's first input, kept;
--   a 2 (104): moves 4 from 100;
--   a 3 (106): moves 6 from 100: fires early, and 106 is kept;
--   a 4 (NULL): counts, moves nothing;
--   a 5 (101): moves 5 from 106, not more;
--   a 6 (100.5): moves 5.5: fires early, 100.5 kept;
--   b 7 (1): b's first input;
--   a 120 (100): the watermark (119) passes [0, 100): a and b fire on time;
--   a 50 (200): late, within the lateness: a's [0, 100) fires again.
INSERT INTO dticks VALUES ('a', 1, 100), ('a', 2, 104), ('a', 3, 106), ('a', 4, NULL),
                         ('a', 5, 101), ('a', 6, 100.5), ('b', 7, 1), ('a', 120, 100),
                         ('a', 50, 200);
SELECT pg_temp.pipeline('moves', 'early when price moves more than 5');
SELECT windowing.process('moves');
SELECT sym, window_start, n, lo, hi, fire_count, pane FROM moves_results
ORDER BY sym, window_start, fire_count;

-- The same in steps of one row, each reading its state back from the heap.
SELECT pg_temp.pipeline('moves_steps', 'early when price moves more than 5');
CALL pg_temp.drain('moves_steps', 1, 1, flush => false);
SELECT count(*) AS differences FROM (
  (SELECT sym, window_start, n, lo, hi, fire_count, pane FROM moves_results
   EXCEPT ALL SELECT sym, window_start, n, lo, hi, fire_count, pane FROM moves_steps_results)
  UNION ALL
  (SELECT sym, window_start, n, lo, hi, fire_count, pane FROM moves_steps_results
   EXCEPT ALL SELECT sym, window_start, n, lo, hi, fire_count, pane FROM moves_results)) d;

-- Purging: each firing has the rows since the one before; a threshold of
-- 0 fires at every change of the input, a quoted name reads that column.
ALTER TABLE dticks RENAME COLUMN price TO "Price";
SELECT NULL::void FROM windowing.create_pipeline('moves_purge', 'dticks', 'ts', '{sym}',
    windowing.tumbling('100 milliseconds'), 'count(*) AS n, sum("Price") AS total',
    emit => 'append', trigger => 'purging early when "Price" moves more than 0',
    start => false, retention => 'keep');
SELECT windowing.process('moves_purge');
SELECT sym, window_start, n, total, fire_count, pane FROM moves_purge_results
ORDER BY sym, window_start, fire_count;
ALTER TABLE dticks RENAME COLUMN "Price" TO price;

-- Global windows fired by the input alone, on a double precision column.
CREATE TABLE dtemps (room int, ts bigint, celsius float8);
SELECT NULL::void FROM windowing.create_pipeline('temp_jumps', 'dtemps', 'ts', '{room}',
    windowing.global(), 'count(*) AS n, avg(celsius) AS mean',
    trigger => 'purging early when celsius moves more than 2', emit => 'append',
    start => false, retention => 'keep');
INSERT INTO dtemps VALUES (1, 1, 20), (1, 2, 21), (1, 3, 'NaN'), (1, 4, 22.5), (1, 5, 22), (1, 6, 19.9);
SELECT windowing.process('temp_jumps');
SELECT room, n, mean, fire_count, pane FROM temp_jumps_results ORDER BY fire_count;

-- alter_pipeline from early firing by rows to by delta and back: the
-- count of rows does not become an input, nor an input a count.
TRUNCATE dticks;
SELECT pg_temp.pipeline('moves_alt', 'early every 100 rows');
INSERT INTO dticks VALUES ('a', 1, 10), ('a', 2, 11);
SELECT windowing.process('moves_alt');
SELECT windowing.alter_pipeline('moves_alt', "trigger" => 'early when price moves more than 1');
INSERT INTO dticks VALUES ('a', 3, 12), ('a', 4, 14);
SELECT windowing.process('moves_alt');
SELECT windowing.alter_pipeline('moves_alt', "trigger" => 'early every 2 rows');
INSERT INTO dticks VALUES ('a', 5, 20);
SELECT windowing.process('moves_alt');
INSERT INTO dticks VALUES ('a', 6, 20);
SELECT windowing.process('moves_alt');
SELECT sym, n, lo, hi, fire_count, pane FROM moves_alt_results ORDER BY fire_count;

-- Refused.
SELECT windowing.create_pipeline('bad', 'dticks', 'ts', '{sym}', windowing.session('1 second'),
    trigger => 'early when price moves more than 1', retention => 'keep');
SELECT windowing.create_pipeline('bad', 'dticks', 'ts', '{sym}', windowing.tumbling('1 second'),
    trigger => 'early when sym moves more than 1', retention => 'keep');
SELECT windowing.create_pipeline('bad', 'dticks', 'ts', '{sym}', windowing.tumbling('1 second'),
    trigger => 'early when cost moves more than 1', retention => 'keep');
SELECT windowing.create_pipeline('bad', 'dticks', 'ts', '{sym}', windowing.tumbling('1 second'),
    trigger => 'early when price moves more than -1', retention => 'keep');
SELECT windowing.create_pipeline('bad', 'dticks', 'ts', '{sym}', windowing.tumbling('1 second'),
    trigger => 'early when price rises', retention => 'keep');
SELECT windowing.alter_pipeline('moves_alt', "trigger" => 'early when sym moves more than 1');
-- A column dropped later stops the steps, with the reason.
ALTER TABLE dticks ADD COLUMN volume int;
SELECT NULL::void FROM windowing.create_pipeline('moves_gone', 'dticks', 'ts', '{sym}',
    windowing.tumbling('1 second'), trigger => 'early when volume moves more than 1',
    start => false, retention => 'keep');
ALTER TABLE dticks DROP COLUMN volume;
SELECT windowing.process('moves_gone');

SELECT windowing.drop_pipeline(name, drop_tables => true) FROM windowing.pipelines
WHERE name LIKE 'moves%' OR name = 'temp_jumps';
DROP TABLE dticks, dtemps;
