-- create_pipeline into tables that exist: a result or late table named by
-- result_table or late_table is written as it is when it fits the
-- pipeline (the columns create_pipeline would make, of the same names and
-- types; other columns that may be left out; for upsert, the unique index;
-- an owner whose privileges the pipeline's owner has), and refused, saying
-- which column or what does not fit, when it does not.
SET datestyle = ISO;
\set SHOW_CONTEXT never
SELECT windowing.create_queue('ex_events', 'k int, ts bigint, v int', retention => 'keep');

-- columns in another order, one more that may be NULL and one with a
-- default, NOT NULL left out, and the unique index an upsert needs
CREATE TABLE ex_results (note text, window_end bigint, k int, window_start bigint,
    window_time bigint, total bigint, n bigint, fire_count int, is_final boolean,
    fired_at timestamptz, added boolean NOT NULL DEFAULT true);
CREATE UNIQUE INDEX ex_results_window ON ex_results (window_end, k, window_start) NULLS NOT DISTINCT;
CREATE TABLE ex_late (routed_at timestamptz NOT NULL DEFAULT now(), event_time bigint,
    watermark bigint, reason text, missed_windows windowing.bigint_window[], row_data jsonb,
    error jsonb);
SELECT windowing.create_pipeline('ex', 'ex_events', 'ts', '{k}', windowing.tumbling('10 milliseconds'),
    'count(*) AS n, sum(v) AS total', allowed_lateness => '100 milliseconds',
    result_table => 'ex_results', late_table => 'ex_late', start => false) > 0 AS created;
SELECT result_table, late_table FROM windowing.pipelines WHERE name = 'ex';
-- its settings are the table's own (no fillfactor added for re-fires)
SELECT reloptions FROM pg_class WHERE oid = 'ex_results'::regclass;
INSERT INTO ex_events VALUES (1, 1, 10), (1, 2, 20), (2, 3, 5), (NULL, 4, 7), (1, 15, 1);
SELECT windowing.process('ex');
-- late rows re-fire their window: its row is updated through the index,
-- one row for the NULL key too; a row without a time goes to the late table
INSERT INTO ex_events VALUES (1, 5, 100), (NULL, 6, 3), (2, NULL, 1);
SELECT windowing.process('ex');
SELECT windowing.flush('ex');
SELECT k, window_start, window_end, window_time, n, total, fire_count, is_final, note, added
FROM ex_results ORDER BY window_start, k NULLS LAST;
SELECT event_time, watermark, reason, missed_windows, row_data, error FROM ex_late;

-- the same tables cannot serve a second pipeline
SELECT windowing.create_pipeline('ex2', 'ex_events', 'ts', '{k}', windowing.tumbling('10 milliseconds'),
    'count(*) AS n, sum(v) AS total', result_table => 'ex_results', start => false);
SELECT windowing.create_pipeline('ex2', 'ex_events', 'ts', '{k}', windowing.tumbling('10 milliseconds'),
    'count(*) AS n, sum(v) AS total', late_table => 'ex_late', start => false);
-- a table of the default name is no table named: it is refused as before
CREATE TABLE ex3_results (k int);
SELECT windowing.create_pipeline('ex3', 'ex_events', 'ts', '{k}', windowing.tumbling('10 milliseconds'),
    start => false);
DROP TABLE ex3_results;

-- append: no index needed
CREATE TABLE ex_append (window_start bigint, window_end bigint, window_time bigint, n bigint,
    fire_count int, is_final boolean, fired_at timestamptz);
SELECT windowing.create_pipeline('ex_append', 'ex_events', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    aggregates => 'count(*) AS n', result_table => 'ex_append', late_table => '', emit => 'append',
    start => false) > 0 AS created;
SELECT windowing.process('ex_append');
SELECT windowing.flush('ex_append');
SELECT window_start, window_end, window_time, n, fire_count, is_final FROM ex_append ORDER BY 1;

-- what does not fit, and why
CREATE TABLE ex_bad (window_start bigint, window_end bigint, n bigint, fire_count int,
    is_final boolean, fired_at timestamptz);
SELECT windowing.create_pipeline('bad', 'ex_events', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    aggregates => 'count(*) AS n', result_table => 'ex_bad', late_table => '', emit => 'append');
ALTER TABLE ex_bad ADD COLUMN window_time timestamptz;
SELECT windowing.create_pipeline('bad', 'ex_events', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    aggregates => 'count(*) AS n', result_table => 'ex_bad', late_table => '', emit => 'append');
ALTER TABLE ex_bad ALTER COLUMN window_time TYPE bigint USING NULL, ALTER COLUMN n TYPE int;
SELECT windowing.create_pipeline('bad', 'ex_events', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    aggregates => 'count(*) AS n', result_table => 'ex_bad', late_table => '', emit => 'append');
ALTER TABLE ex_bad ALTER COLUMN n TYPE bigint, ADD COLUMN region text NOT NULL;
SELECT windowing.create_pipeline('bad', 'ex_events', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    aggregates => 'count(*) AS n', result_table => 'ex_bad', late_table => '', emit => 'append');
ALTER TABLE ex_bad ALTER COLUMN region SET DEFAULT 'north';
-- it fits for append, not for upsert without the unique index
SELECT windowing.create_pipeline('bad', 'ex_events', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    aggregates => 'count(*) AS n', result_table => 'ex_bad', late_table => '');
-- nor with one where a NULL key would get a row per firing
CREATE TABLE ex_keyed (k int, window_start bigint, window_end bigint, window_time bigint, n bigint,
    fire_count int, is_final boolean, fired_at timestamptz, UNIQUE (k, window_start, window_end));
SELECT windowing.create_pipeline('bad', 'ex_events', 'ts', '{k}', windowing.tumbling('10 milliseconds'),
    'count(*) AS n', result_table => 'ex_keyed', late_table => '');
-- nor with one on other columns, or partial
CREATE UNIQUE INDEX ON ex_keyed (k, window_start) NULLS NOT DISTINCT;
CREATE UNIQUE INDEX ON ex_keyed (k, window_start, window_end) NULLS NOT DISTINCT WHERE n > 0;
SELECT windowing.create_pipeline('bad', 'ex_events', 'ts', '{k}', windowing.tumbling('10 milliseconds'),
    'count(*) AS n', result_table => 'ex_keyed', late_table => '');
CREATE UNIQUE INDEX ON ex_keyed (window_start, window_end, k) NULLS NOT DISTINCT;
SELECT windowing.create_pipeline('keyed', 'ex_events', 'ts', '{k}', windowing.tumbling('10 milliseconds'),
    'count(*) AS n', result_table => 'ex_keyed', late_table => '', start => false) > 0 AS created;
-- a key column's type has its typmod
SELECT windowing.create_queue('ex_named', 'name varchar(20), ts bigint', retention => 'keep');
CREATE TABLE ex_names (name varchar(10), window_start bigint, window_end bigint, window_time bigint,
    count bigint, fire_count int, is_final boolean, fired_at timestamptz);
SELECT windowing.create_pipeline('bad', 'ex_named', 'ts', '{name}', windowing.tumbling('10 milliseconds'),
    result_table => 'ex_names', late_table => '', emit => 'append');
-- a late table
CREATE TABLE ex_bad_late (routed_at timestamptz NOT NULL, event_time bigint, watermark bigint,
    reason text, missed_windows windowing.bigint_window[], row_data jsonb);
SELECT windowing.create_pipeline('bad', 'ex_events', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    late_table => 'ex_bad_late', start => false);
ALTER TABLE ex_bad_late ADD COLUMN error jsonb;
SELECT windowing.create_pipeline('bad', 'ex_events', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    late_table => 'ex_bad_late', start => false);
ALTER TABLE ex_bad_late ALTER COLUMN missed_windows TYPE windowing.time_window[] USING NULL;
SELECT windowing.create_pipeline('bad', 'ex_events', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    late_table => 'ex_bad_late', start => false);
-- not a table
CREATE VIEW ex_view AS SELECT * FROM ex_append;
SELECT windowing.create_pipeline('bad', 'ex_events', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    aggregates => 'count(*) AS n', result_table => 'ex_view', late_table => '', emit => 'append');
DROP VIEW ex_view;
-- nothing was made by the refused calls
SELECT count(*) FROM windowing.pipeline WHERE name = 'bad';
SELECT count(*) FROM pg_class WHERE relname IN ('bad_results', 'bad_late');

-- Another role's table: a pipeline writes its tables with its owner's
-- rights, and drop_pipeline(drop_tables => true) drops them, so its owner
-- must have the privileges of the table's owner, as for a table
-- create_pipeline makes
CREATE ROLE windowing_ex_owner;
CREATE ROLE windowing_ex_member;
CREATE ROLE windowing_ex_other;
GRANT windowing_ex_owner TO windowing_ex_member;
GRANT CREATE ON SCHEMA public TO windowing_ex_owner, windowing_ex_member;
ALTER TABLE ex_events OWNER TO windowing_ex_owner;
CREATE TABLE ex_theirs (window_start bigint, window_end bigint, window_time bigint, n bigint,
    fire_count int, is_final boolean, fired_at timestamptz);
ALTER TABLE ex_theirs OWNER TO windowing_ex_other;
GRANT ALL ON ex_theirs TO windowing_ex_owner;
SET ROLE windowing_ex_owner;
SELECT windowing.create_pipeline('theirs', 'ex_events', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    aggregates => 'count(*) AS n', result_table => 'ex_theirs', late_table => '', emit => 'append');
RESET ROLE;
ALTER TABLE ex_theirs OWNER TO windowing_ex_owner;
SET ROLE windowing_ex_member;
SELECT windowing.create_pipeline('theirs', 'ex_events', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    aggregates => 'count(*) AS n', result_table => 'ex_theirs', late_table => '', emit => 'append',
    start => false) > 0 AS created;
SELECT windowing.process('theirs');
SELECT windowing.flush('theirs');
SELECT window_start, n FROM ex_theirs ORDER BY 1;
SELECT windowing.drop_pipeline('theirs', drop_tables => true);
RESET ROLE;
SELECT to_regclass('ex_theirs') AS dropped_with_its_pipeline;

SELECT windowing.drop_pipeline(p, drop_tables => true) FROM unnest(ARRAY['ex', 'ex_append', 'keyed']) p;
DROP TABLE ex_events, ex_named, ex_bad, ex_names, ex_bad_late;
REVOKE CREATE ON SCHEMA public FROM windowing_ex_owner, windowing_ex_member;
DROP ROLE windowing_ex_member, windowing_ex_other, windowing_ex_owner;
