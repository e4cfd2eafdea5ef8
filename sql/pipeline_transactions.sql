-- A step inside the user's own transaction: a transaction that already has
-- an id, several steps in one transaction, savepoints rolled back, PL/pgSQL
-- exception blocks, PREPARE TRANSACTION, rows the transaction inserted
-- itself, a read-only transaction.  Each consumes every committed row
-- exactly once, or is refused.
-- A second session (dblink) plays the producer or the other stepper.
CREATE EXTENSION dblink;
SELECT dblink_connect('other', 'dbname=' || current_database() ||
                      ' host=' || current_setting('unix_socket_directories') ||
                      ' port=' || current_setting('port'));
-- the other session reads timestamps as this one does
SELECT dblink_exec('other', 'SET timezone = ' || quote_literal(current_setting('timezone')));
CREATE TABLE tx_other (x int);
CREATE TABLE tx_q (k int, ts timestamptz, v int);
CREATE FUNCTION pg_temp.make(name text) RETURNS void LANGUAGE sql AS $$
    SELECT windowing.create_pipeline(name, 'tx_q', 'ts', '{k}', windowing.tumbling('1 minute'),
                                     'count(*) AS n, sum(v) AS s', start => false, retention => 'consume');
$$;
CREATE FUNCTION pg_temp.results(name text, OUT n bigint, OUT s bigint) LANGUAGE plpgsql AS $$
BEGIN
    PERFORM windowing.flush(name);
    EXECUTE format('SELECT n, s FROM %I', name || '_results') INTO n, s;
END
$$;

-- 1. The stepping transaction got its id before a producer began; the
-- producer commits after the step.  Its row belongs to a later tick.
SELECT pg_temp.make('t1');
INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:01', 1);
SELECT windowing.process('t1');
INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:02', 1);
BEGIN;
INSERT INTO tx_other VALUES (1);                    -- an id before the producer's
SELECT dblink_exec('other', 'BEGIN');
SELECT dblink_exec('other', $$INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:03', 100)$$);
SELECT windowing.process('t1') AS in_xact_with_id;
COMMIT;
SELECT dblink_exec('other', 'COMMIT');
INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:04', 1);
SELECT windowing.process('t1'), windowing.process('t1');
SELECT * FROM pg_temp.results('t1');                -- 4 rows, 103
SELECT windowing.drop_pipeline('t1', drop_tables => true);
TRUNCATE tx_q;

-- 2. Two pipelines of one queue stepped in one transaction, as a schedule
-- calling process() for every pipeline does; a producer in between.
SELECT pg_temp.make('t2a'), pg_temp.make('t2b');
INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:01', 1);
SELECT windowing.process('t2a'), windowing.process('t2b');
INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:02', 1);
BEGIN;
SELECT windowing.process('t2a') AS step_a;
SELECT dblink_exec('other', 'BEGIN');
SELECT dblink_exec('other', $$INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:03', 100)$$);
SELECT windowing.process('t2b') AS step_b;
COMMIT;
SELECT dblink_exec('other', 'COMMIT');
INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:04', 1);
SELECT windowing.process('t2a'), windowing.process('t2b');
SELECT windowing.process('t2a'), windowing.process('t2b');
SELECT * FROM pg_temp.results('t2a');               -- 4 rows, 103
SELECT * FROM pg_temp.results('t2b');               -- the same
SELECT windowing.drop_pipeline(p, drop_tables => true) FROM unnest(ARRAY['t2a', 't2b']) p;
TRUNCATE tx_q;

-- 3. One pipeline stepped twice in one transaction, with rows committed by
-- another session in between.
SELECT pg_temp.make('t3');
INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:01', 1);
BEGIN;
SELECT windowing.process('t3') AS first_step;
SELECT dblink_exec('other', $$INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:02', 10)$$);
SELECT windowing.process('t3') AS second_step;
COMMIT;
SELECT * FROM pg_temp.results('t3');                -- 2 rows, 11
SELECT windowing.drop_pipeline('t3', drop_tables => true);
TRUNCATE tx_q;

-- 4. A step rolled back to a savepoint, while another session steps the
-- same pipeline and commits: the undone step leaves nothing behind, not
-- even its state in shared memory.
SELECT pg_temp.make('t4');
INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:01', 1);
SELECT windowing.process('t4');
INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:02', 10);
BEGIN;
SAVEPOINT sp;
SELECT windowing.process('t4') AS undone;
ROLLBACK TO SAVEPOINT sp;
SELECT dblink_exec('other', $$INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:03', 100)$$);
SELECT * FROM dblink('other', $$SELECT windowing.process('t4')$$) AS t(n bigint);
COMMIT;
INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:04', 1000);
SELECT windowing.process('t4');
SELECT * FROM pg_temp.results('t4');                -- 4 rows, 1111
SELECT rows_consumed FROM windowing.pipeline_stats WHERE name = 't4';

-- A savepoint released keeps its step; watermarks and flushes follow the
-- same rule.
INSERT INTO tx_q VALUES (2, '2026-01-01 00:05:00', 1);
BEGIN;
SAVEPOINT a;
SELECT windowing.process('t4') AS kept;
RELEASE SAVEPOINT a;
SAVEPOINT b;
SELECT windowing.advance_watermark('t4', '2026-01-01 00:10:00'::timestamptz);
ROLLBACK TO SAVEPOINT b;
COMMIT;
SELECT * FROM dblink('other', $$SELECT windowing.process('t4')$$) AS t(n bigint);
SELECT k, n, s FROM t4_results ORDER BY k;          -- key 2 has not fired
SELECT rows_consumed FROM windowing.pipeline_stats WHERE name = 't4';
SELECT windowing.drop_pipeline('t4', drop_tables => true);
TRUNCATE tx_q;

-- 5. A PL/pgSQL exception block around a step that fails: the failed step
-- is undone and the next one consumes its rows.
SELECT pg_temp.make('t5');
CREATE TABLE tx_bad (k int, ts timestamptz, v text);
SELECT windowing.create_pipeline('t5bad', 'tx_bad', 'ts', '{k}', windowing.tumbling('1 minute'),
                                 'sum(v::int) AS s', start => false, retention => 'consume');
INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:01', 1);
INSERT INTO tx_bad VALUES (1, '2026-01-01 00:00:01', '1'), (1, '2026-01-01 00:00:02', 'n/a');
DO $$
BEGIN
    PERFORM windowing.process('t5');
    BEGIN
        PERFORM windowing.process('t5bad');
    EXCEPTION WHEN invalid_text_representation THEN
        RAISE NOTICE 'caught: %', SQLERRM;
    END;
    INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:02', 10);
END
$$;
SELECT windowing.process('t5');
SELECT * FROM pg_temp.results('t5');                -- 2 rows, 11
SELECT rows_consumed FROM windowing.pipeline_stats WHERE name = 't5bad';
UPDATE tx_bad SET v = '2' WHERE v = 'n/a';
SELECT windowing.process('t5bad');
SELECT windowing.flush('t5bad');
SELECT s FROM t5bad_results;                        -- 3
SELECT windowing.drop_pipeline(p, drop_tables => true) FROM unnest(ARRAY['t5', 't5bad']) p;
TRUNCATE tx_q;

-- 6. Rows the stepping transaction inserted itself, before and after the
-- step, with a later transaction committed meanwhile: they are not the
-- step's to read (neither the step nor its helper process may count them
-- before they commit), and the first step after the commit reads them all.
SELECT pg_temp.make('t6');
INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:00', 1);
SELECT windowing.process('t6');
INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:00.5', 1);   -- committed, same tick
BEGIN;
INSERT INTO tx_q SELECT 1, '2026-01-01 00:00:01', 1 FROM generate_series(1, 500);
SELECT dblink_exec('other', 'INSERT INTO tx_other VALUES (1)');
SET LOCAL windowing.read_helper_rows = 10;
SELECT windowing.process('t6') AS with_helper;
SET LOCAL windowing.read_helper_rows = 1000000;
SELECT windowing.process('t6') AS without_helper;
INSERT INTO tx_q SELECT 1, '2026-01-01 00:00:02', 1 FROM generate_series(1, 20);
COMMIT;
SELECT windowing.process('t6') AS after_commit;
SELECT * FROM pg_temp.results('t6');                -- 522 rows, 522
SELECT windowing.drop_pipeline('t6', drop_tables => true);
TRUNCATE tx_q;

-- 7. PREPARE TRANSACTION after a step: the prepared step keeps the
-- pipeline until it is committed or rolled back, and the backend goes on.
SELECT pg_temp.make('t7');
INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:01', 1);
SELECT windowing.process('t7');
INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:02', 10);
BEGIN;
SELECT windowing.process('t7') AS prepared_step;
PREPARE TRANSACTION 'tx_step';
BEGIN;
SELECT count(pg_notify('tx_channel', repeat('z', 100) || g)) FROM generate_series(1, 300) g;
COMMIT;
SELECT 'backend still alive' AS after_prepare;
COMMIT PREPARED 'tx_step';
INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:03', 100);
SELECT windowing.process('t7');
SELECT * FROM pg_temp.results('t7');                -- 3 rows, 111
-- rolled back, a prepared step consumed nothing
INSERT INTO tx_q VALUES (2, '2026-01-01 00:05:00', 1);
BEGIN;
SELECT windowing.process('t7') AS prepared_then_rolled_back;
PREPARE TRANSACTION 'tx_step2';
ROLLBACK PREPARED 'tx_step2';
SELECT windowing.process('t7');
SELECT rows_consumed FROM windowing.pipeline_stats WHERE name = 't7';   -- 4
-- a step that fired windows has notified listeners: PostgreSQL refuses to
-- prepare it, and the step is rolled back
SELECT pg_temp.make('t7n');
INSERT INTO tx_q VALUES (3, '2026-01-01 00:10:00', 1), (3, '2026-01-01 00:12:00', 1);
BEGIN;
SELECT windowing.process('t7n') AS fires;
PREPARE TRANSACTION 'tx_step3';
SELECT rows_consumed, windows_fired FROM windowing.pipeline_stats WHERE name = 't7n';  -- 0, 0
SELECT windowing.process('t7n');
SELECT rows_consumed, windows_fired FROM windowing.pipeline_stats WHERE name = 't7n';  -- 6, 3
SELECT windowing.drop_pipeline('t7n', drop_tables => true);
SELECT windowing.drop_pipeline('t7', drop_tables => true);
TRUNCATE tx_q;

-- 8. A cursor held open on the queue across a step does not hide rows.
SELECT pg_temp.make('t8');
INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:01', 1);
BEGIN;
DECLARE c CURSOR FOR SELECT v FROM tx_q;
FETCH 1 FROM c;
SELECT dblink_exec('other', $$INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:02', 10)$$);
SELECT windowing.process('t8') AS with_cursor_open;
CLOSE c;
COMMIT;
SELECT * FROM pg_temp.results('t8');                -- 2 rows, 11

-- 9. Snapshot isolation would pin what a step sees: refused.
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT windowing.process('t8');
ROLLBACK;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT windowing.flush('t8');
ROLLBACK;
SELECT windowing.drop_pipeline('t8', drop_tables => true);

-- 10. A key too big for an index entry goes to the late table; the
-- pipeline goes on.
CREATE TABLE tx_urls (url text, ts timestamptz);
SELECT windowing.create_pipeline('t10', 'tx_urls', 'ts', '{url}', windowing.tumbling('1 minute'),
                                 start => false, retention => 'consume');
INSERT INTO tx_urls VALUES ('https://example.com/a', '2026-01-01 00:00:01');
INSERT INTO tx_urls SELECT 'https://example.com/?q=' || string_agg(md5(g::text), ''),
                           '2026-01-01 00:00:02' FROM generate_series(1, 120) g;
INSERT INTO tx_urls VALUES ('https://example.com/b', '2026-01-01 00:02:00');
SELECT windowing.process('t10');
SELECT windowing.flush('t10');
SELECT url, window_start, count FROM t10_results ORDER BY window_start, url;
SELECT length(row_data->>'url') AS url_length, reason FROM t10_late;
SELECT late_routed FROM windowing.pipeline_stats WHERE name = 't10';
SELECT windowing.drop_pipeline('t10', drop_tables => true);

-- 11. A read-only transaction cannot step, with rows to read or without:
-- the functions that step are refused there as nextval() is, and the rows
-- wait for a step that can write them.
TRUNCATE tx_q;
SELECT pg_temp.make('t11');
BEGIN READ ONLY;
SELECT windowing.process('t11');
ROLLBACK;
INSERT INTO tx_q VALUES (1, '2026-01-01 00:00:01', 1), (1, '2026-01-01 00:00:30', 2);
BEGIN READ ONLY;
SELECT windowing.process('t11');
ROLLBACK;
SET default_transaction_read_only = on;
SELECT windowing.advance_watermark('t11', '2026-01-01 00:05:00');
SELECT windowing.flush('t11');
SELECT windowing.rebuild('t11');
SELECT windowing.alter_pipeline('t11', parallelism => 2);
RESET default_transaction_read_only;
SELECT rows_consumed, watermark, parallelism FROM windowing.pipeline WHERE name = 't11';
SELECT windowing.process('t11');
SELECT * FROM pg_temp.results('t11');               -- 2 rows, 3
SELECT windowing.drop_pipeline('t11', drop_tables => true);

SELECT dblink_disconnect('other');
