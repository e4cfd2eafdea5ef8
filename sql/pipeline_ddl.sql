-- DDL on a live pipeline's tables: the next step (and so the worker, which
-- records the error and fails the pipeline after repeated errors) stops
-- with an error naming the pipeline and what changed.  Nothing is consumed
-- until the table is put back or the pipeline is made again.
SET datestyle = ISO;
\set SHOW_CONTEXT never
CREATE TABLE q (k int, ts bigint, v int, gap interval);
CREATE FUNCTION make(p text) RETURNS void LANGUAGE sql AS $$
    SELECT windowing.create_pipeline(p, 'q', 'ts', '{k}', windowing.tumbling('10 milliseconds'),
        'sum(v) AS total, count(*) AS n', start => false, retention => 'consume')
$$;
CREATE FUNCTION retry(p text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    RETURN windowing.process(p)::text;
EXCEPTION WHEN OTHERS THEN
    RETURN SQLERRM;
END $$;
SELECT make('p');
INSERT INTO q VALUES (1, 1, 10, NULL), (1, 2, 20, NULL);
SELECT windowing.process('p');

-- a renamed column: put back, the pipeline goes on from where it was
ALTER TABLE q RENAME COLUMN ts TO event_ts;
INSERT INTO q VALUES (1, 3, 30, NULL);
SELECT windowing.process('p');
ALTER TABLE q RENAME COLUMN event_ts TO ts;
ALTER TABLE q RENAME COLUMN k TO key;
SELECT windowing.process('p');
SELECT * FROM windowing.open_windows('p');
ALTER TABLE q RENAME COLUMN key TO k;
ALTER TABLE q RENAME COLUMN v TO value;
SELECT windowing.process('p');
ALTER TABLE q RENAME COLUMN value TO v;
SELECT windowing.process('p');
SELECT * FROM windowing.open_windows('p');

ALTER TABLE q RENAME COLUMN windowing_seq TO seq;
SELECT windowing.process('p');
ALTER TABLE q RENAME COLUMN seq TO windowing_seq;

-- a retyped column
ALTER TABLE q ALTER COLUMN ts TYPE numeric;
SELECT windowing.process('p');
ALTER TABLE q ALTER COLUMN ts TYPE bigint;
ALTER TABLE q ALTER COLUMN k TYPE bigint;
SELECT windowing.process('p');
ALTER TABLE q ALTER COLUMN k TYPE int;
ALTER TABLE q ALTER COLUMN v TYPE bigint;
SELECT windowing.process('p');
ALTER TABLE q ALTER COLUMN v TYPE numeric;
SELECT windowing.flush('p');
ALTER TABLE q ALTER COLUMN v TYPE int;
-- a type that gives the aggregates the same result types is fine
ALTER TABLE q ALTER COLUMN v TYPE smallint;
INSERT INTO q VALUES (1, 4, 40, NULL);
SELECT windowing.process('p');
SELECT * FROM windowing.open_windows('p');
ALTER TABLE q ALTER COLUMN v TYPE int;

-- a dropped column
ALTER TABLE q DROP COLUMN v;
SELECT windowing.process('p');
ALTER TABLE q ADD COLUMN v int;
SELECT windowing.process('p');
SELECT * FROM windowing.open_windows('p');

-- the result table and the late table, altered or dropped
ALTER TABLE p_results ALTER COLUMN total TYPE numeric;
SELECT windowing.process('p');
ALTER TABLE p_results ALTER COLUMN total TYPE bigint;
ALTER TABLE p_results RENAME TO p_out;
SELECT windowing.flush('p');
SELECT k, window_start, total, n FROM p_out;
DROP TABLE p_late;
SELECT windowing.process('p');
SELECT retry('p');
DROP TABLE p_out;
SELECT windowing.process('p');
SELECT windowing.drop_pipeline('p');

-- the queue dropped under its pipeline
SELECT make('gone');
DROP TABLE q;
SELECT windowing.process('gone');
SELECT * FROM windowing.open_windows('gone');
SELECT windowing.flush('gone');
SELECT name, state, result_table FROM windowing.pipelines;
SELECT windowing.drop_pipeline('gone', drop_tables => true);

-- a dynamic session gap column retyped
CREATE TABLE s (ts bigint, gap interval);
SELECT windowing.create_pipeline('sess', 's', 'ts', assigner => windowing.session_dynamic('gap'),
    start => false, retention => 'consume');
ALTER TABLE s ALTER COLUMN gap TYPE text;
INSERT INTO s VALUES (1, '5 milliseconds');
SELECT windowing.process('sess');
ALTER TABLE s DROP COLUMN gap;
SELECT windowing.process('sess');
SELECT windowing.drop_pipeline('sess', drop_tables => true);
DROP TABLE s;
DROP FUNCTION make(text), retry(text);
