-- Who may hang a pipeline on a queue, read its errors and free its state;
-- and the limits on key columns.
SET datestyle = ISO;
\set SHOW_CONTEXT never
CREATE ROLE windowing_qowner;
CREATE ROLE windowing_reader;
CREATE ROLE windowing_member IN ROLE windowing_qowner;
CREATE ROLE windowing_stats IN ROLE pg_read_all_stats;
GRANT CREATE ON SCHEMA public TO windowing_qowner, windowing_reader, windowing_member;
-- the queue's owner may act as the reader, not the other way round
GRANT windowing_reader TO windowing_qowner;

SET ROLE windowing_qowner;
CREATE TABLE access_q (k int, ts bigint, note text);
SELECT windowing.create_pipeline('owned', 'access_q', 'ts', '{k}',
    windowing.tumbling('10 milliseconds'), 'count(*) AS n, sum(note::int) AS notes', start => false, retention => 'consume');
GRANT SELECT ON access_q TO windowing_reader;
RESET ROLE;

-- A pipeline's owner must have the privileges of its queue's owner: a role
-- that may only read the queue cannot hang a paused pipeline on it (and so
-- keep it from ever being emptied), neither through create_pipeline ...
SET ROLE windowing_reader;
SELECT windowing.create_pipeline('held', 'access_q', 'ts', '{}',
    windowing.tumbling('10 milliseconds'), start => false, retention => 'consume');
SELECT to_regclass('held_results') IS NULL AS no_table_left;
-- ... nor by writing the row itself
CREATE TABLE held_results (window_start bigint, window_end bigint, window_time bigint,
    count bigint, fire_count int, is_final boolean, fired_at timestamptz);
INSERT INTO windowing.pipeline (name, owner, source, time_column, time_type, key_columns,
    assigner, aggregates, allowed_lateness, result_table, emit, state)
VALUES ('held', 'windowing_reader', 'access_q', 'ts', 'bigint', '{}',
    windowing.tumbling('10 milliseconds'), 'count(*)', '0', 'held_results', 'append', 'paused');
DROP TABLE held_results;
RESET ROLE;

-- pipelines of the queue's owner, and of members of its role, share it
SET ROLE windowing_member;
SELECT windowing.create_pipeline('shared', 'access_q', 'ts', '{}',
    windowing.tumbling('10 milliseconds'), start => false, retention => 'consume');
RESET ROLE;
SET ROLE windowing_qowner;
SELECT windowing.create_pipeline('owned2', 'access_q', 'ts', '{}',
    windowing.tumbling('10 milliseconds'), start => false, retention => 'consume');
INSERT INTO access_q (k, ts, note) VALUES (1, 1, '1'), (2, 2, '2'), (1, 15, '3');
SELECT windowing.process('owned') AS owned, windowing.process('owned2') AS owned2;
RESET ROLE;
SET ROLE windowing_member;
SELECT windowing.process('shared');
RESET ROLE;
SELECT p.name, p.owner, s.rows_consumed
FROM windowing.pipelines p JOIN windowing.pipeline_stats s USING (name) ORDER BY 1;

-- nor can a pipeline be given to a role without them: by its owner, by a
-- superuser, or by writing the owner column
SET ROLE windowing_qowner;
SELECT windowing.alter_pipeline_owner('owned2', 'windowing_reader');
UPDATE windowing.pipeline SET owner = 'windowing_reader' WHERE name = 'owned2';
RESET ROLE;
SELECT windowing.alter_pipeline_owner('owned2', 'windowing_reader');
SELECT windowing.alter_pipeline_owner('owned2', 'windowing_member');
SELECT name, owner FROM windowing.pipelines WHERE name = 'owned2';

-- a pipeline whose queue changed hands after it was made (or made before
-- the rule) still runs, pauses and resumes
SET ROLE windowing_reader;
CREATE TABLE handed_q (ts bigint);
SELECT windowing.create_pipeline('handed', 'handed_q', 'ts',
    assigner => windowing.tumbling('10 milliseconds'), start => false, retention => 'consume');
RESET ROLE;
ALTER TABLE handed_q OWNER TO windowing_qowner;
GRANT SELECT ON handed_q TO windowing_reader;
INSERT INTO handed_q VALUES (1);
SET ROLE windowing_reader;
SELECT windowing.process('handed');
SELECT windowing.pause_pipeline('handed');
SELECT windowing.resume_pipeline('handed');
RESET ROLE;
SELECT windowing.drop_pipeline('handed', drop_tables => true);
DROP TABLE handed_q;

-- last_error, its detail and its hint are shown, as pg_stat_activity shows
-- a query, to roles with the privileges of the pipeline's owner and to
-- pg_read_all_stats; to others they are NULL, and the rest of the row
-- (the SQLSTATE and the row at fault among it) is still there.  (The
-- worker writes them; PostgreSQL's errors quote row data.)
UPDATE windowing.pipeline SET last_error = 'invalid input syntax for type integer: "SSN 078-05-1120"',
    last_error_sqlstate = '22P02', last_error_detail = 'Key (note)=(SSN 078-05-1120).',
    last_error_hint = 'SSN 078-05-1120 is no integer.', last_error_seq = 7,
    failures = 1 WHERE name = 'owned';
INSERT INTO access_q (k, ts, note) VALUES (2, 16, '4');
-- a step that finds no state in memory folds the log into window_state
SELECT windowing._forget_state(id) FROM windowing.pipeline WHERE name = 'owned';
SELECT windowing.process('owned');
SELECT (SELECT count(*) FROM windowing.window_state) > 0 AS stored,
       (SELECT count(*) FROM windowing.state_log) > 0 AS logged;
SET ROLE windowing_reader;
SELECT name, state, rows_consumed, failures, last_error, last_error_sqlstate, last_error_detail,
       last_error_hint, last_error_seq
FROM windowing.pipeline_stats ORDER BY 1;
SELECT name FROM windowing.pipeline_stats
WHERE concat(last_error, last_error_detail, last_error_hint) LIKE '%SSN%';
-- the tables behind it show others nothing
SELECT count(*) FROM windowing.pipeline;
SELECT count(*) FROM windowing.window_state;
SELECT count(*) FROM windowing.state_log;
SELECT * FROM windowing.open_windows('owned');
RESET ROLE;
SET ROLE windowing_qowner;
SELECT name, last_error FROM windowing.pipeline_stats WHERE last_error IS NOT NULL;
SELECT count(*) FROM windowing.pipeline WHERE last_error IS NOT NULL;
RESET ROLE;
SET ROLE windowing_member;
SELECT name, last_error FROM windowing.pipeline_stats WHERE last_error IS NOT NULL;
RESET ROLE;
SET ROLE windowing_stats;
SELECT name, last_error, last_error_detail, last_error_hint FROM windowing.pipeline_stats
WHERE last_error IS NOT NULL;
RESET ROLE;
SELECT name, last_error FROM windowing.pipeline_stats WHERE last_error IS NOT NULL;

-- Only a superuser may evict a pipeline's state from shared memory; its
-- owner's drop_pipeline frees it, and the state of a pipeline that still
-- exists stays whoever asks.
SELECT substr(p.channel, 11)::int AS owned_id, s.steps AS owned_steps
FROM windowing.pipelines p JOIN windowing.pipeline_stats s USING (name) WHERE name = 'owned' \gset
SELECT substr(p.channel, 11)::int AS owned2_id, s.steps AS owned2_steps
FROM windowing.pipelines p JOIN windowing.pipeline_stats s USING (name) WHERE name = 'owned2' \gset
SELECT windowing._state_memory_bytes(:owned_id, :owned_steps) > 0 AS owned_in_memory,
       windowing._state_memory_bytes(:owned2_id, :owned2_steps) > 0 AS owned2_in_memory;
SET ROLE windowing_reader;
SELECT has_function_privilege('windowing._forget_state(int)', 'EXECUTE') AS may_forget;
SELECT windowing._forget_state(:owned_id);
SELECT windowing._forget_dropped_state(:owned_id);
RESET ROLE;
SET ROLE windowing_member;
SELECT windowing.drop_pipeline('owned2', drop_tables => true);
RESET ROLE;
SELECT windowing._state_memory_bytes(:owned_id, :owned_steps) > 0 AS owned_in_memory,
       windowing._state_memory_bytes(:owned2_id, :owned2_steps) > 0 AS owned2_in_memory;

-- An upsert result table's unique index holds window_end, window_start
-- and the key columns, in at most 32 columns: 30 keys at most, said up
-- front.  Append mode keeps no such index, nor does the state (a key is
-- one bytea): 120 keys work.
SELECT format('CREATE TABLE wide (ts bigint, %s)',
              string_agg(format('k%s int', i), ', ' ORDER BY i)) FROM generate_series(1, 120) i \gexec
CREATE FUNCTION pg_temp.keys(n int) RETURNS name[]
LANGUAGE sql AS $$ SELECT array_agg(('k' || i)::name ORDER BY i) FROM generate_series(1, n) i $$;
SELECT windowing.create_pipeline('wide31', 'wide', 'ts', pg_temp.keys(31),
    windowing.tumbling('10 milliseconds'), start => false, retention => 'consume');
SELECT windowing.create_pipeline('wide33', 'wide', 'ts', pg_temp.keys(33),
    windowing.tumbling('10 milliseconds'), start => false, retention => 'consume');
SELECT windowing.create_pipeline('wide30', 'wide', 'ts', pg_temp.keys(30),
    windowing.tumbling('10 milliseconds'), start => false, retention => 'consume');
SELECT windowing.create_pipeline('wide120', 'wide', 'ts', pg_temp.keys(120),
    windowing.tumbling('10 milliseconds'), emit => 'append', start => false, retention => 'consume');
INSERT INTO wide (ts, k1, k120) VALUES (1, 1, 1), (2, 1, 2), (3, 1, 1), (25, 1, 1);
INSERT INTO wide (ts, k1, k120) VALUES (4, 1, 1);
SELECT windowing.process('wide30'), windowing.process('wide120');
SELECT windowing.flush('wide30'), windowing.flush('wide120');
SELECT k1, k2, k30, window_start, count FROM wide30_results ORDER BY window_start, k1;
SELECT k1, k2, k120, window_start, count FROM wide120_results ORDER BY window_start, k120;
SELECT count(*) AS late_rows FROM wide120_late;

SELECT windowing.drop_pipeline(name, drop_tables => true) FROM windowing.pipelines ORDER BY name;
DROP TABLE access_q, wide;
REVOKE CREATE ON SCHEMA public FROM windowing_qowner, windowing_reader, windowing_member;
DROP ROLE windowing_qowner, windowing_reader, windowing_member, windowing_stats;
