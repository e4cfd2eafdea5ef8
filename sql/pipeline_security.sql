-- A pipeline belongs to its owner: it runs with the owner's rights, and
-- only the owner or a superuser may run, change or drop it.
SET datestyle = ISO;
\set SHOW_CONTEXT never
CREATE ROLE windowing_alice;
CREATE ROLE windowing_bob;
GRANT CREATE ON SCHEMA public TO windowing_alice, windowing_bob;

SET ROLE windowing_alice;
CREATE TABLE alice_events (ts bigint, v int);
SELECT windowing.create_pipeline('alice', 'alice_events', 'ts',
    assigner => windowing.tumbling('10 milliseconds'), aggregates => 'sum(v) AS total',
    start => false, retention => 'consume');
INSERT INTO alice_events VALUES (1, 1), (2, 2), (15, 3);
SELECT windowing.process('alice');
SELECT windowing.flush('alice');
SELECT window_start, total FROM alice_results ORDER BY 1;
RESET ROLE;

-- others may see that it exists, not touch it
SET ROLE windowing_bob;
SELECT name, state FROM windowing.pipelines;
SELECT windowing.process('alice');
SELECT windowing.flush('alice');
SELECT windowing.advance_watermark('alice', 100::bigint);
SELECT windowing.pause_pipeline('alice');
SELECT windowing.resume_pipeline('alice');
SELECT windowing.drop_pipeline('alice');
SELECT * FROM windowing.open_windows('alice');
SELECT windowing.advance_watermark('alice', '2026-01-01 00:00+00'::timestamptz);
SELECT windowing.advance_watermark('alice', '100');
SELECT windowing._lock_pipeline('alice');
SELECT count(*) FROM windowing.pipeline;
SELECT count(*) FROM windowing.window_state;
UPDATE windowing.pipeline SET state = 'failed';
DELETE FROM windowing.pipeline;
DELETE FROM windowing.window_state;
-- nor build a pipeline over a table it cannot alter
SELECT windowing.create_pipeline('steal', 'alice_events', 'ts',
    assigner => windowing.tumbling('10 milliseconds'), retention => 'consume');
-- a pipeline of bob's reads with bob's rights
CREATE TABLE bob_events (ts bigint);
SELECT windowing.create_pipeline('bob', 'bob_events', 'ts',
    assigner => windowing.tumbling('10 milliseconds'), start => false, retention => 'consume');
-- window states and definitions are the extension's to write, even for
-- their owner: a forged state would reach C functions as if they had made it
INSERT INTO bob_events VALUES (1), (2);
SELECT windowing.process('bob');
SELECT count(*) FROM windowing.window_state;
UPDATE windowing.window_state SET state = '\x01ffffffff';
INSERT INTO windowing.window_state SELECT pipeline_id, '\x', 0, 1, 0, '\x' FROM windowing.window_state;
DELETE FROM windowing.window_state;
INSERT INTO bob_events VALUES (3);
SELECT windowing.process('bob');
SELECT count(*) FROM windowing.state_log;
UPDATE windowing.state_log SET changes = '\x00';
INSERT INTO windowing.state_log SELECT pipeline_id, step + 1, changes FROM windowing.state_log;
DELETE FROM windowing.state_log;
UPDATE windowing.pipeline SET aggregates = 'sum(ts)';
UPDATE windowing.pipeline SET key_columns = '{ts}', source = 'alice_events';
INSERT INTO windowing.pipeline (id, name, owner, source, time_column, time_type, key_columns,
    assigner, aggregates, allowed_lateness, result_table, emit)
SELECT id + 100, 'bob2', owner, source, time_column, time_type, key_columns,
    assigner, aggregates, allowed_lateness, result_table, emit FROM windowing.pipeline;
-- a row written by hand names tables its owner may read and owns
INSERT INTO windowing.pipeline (name, owner, source, time_column, time_type, key_columns,
    assigner, aggregates, allowed_lateness, result_table, emit)
VALUES ('bob3', 'windowing_bob', 'bob_events', 'ts', 'bigint', '{}',
    windowing.tumbling('10 milliseconds'), 'count(*)', '0', 'alice_results', 'append');
INSERT INTO windowing.pipeline (name, owner, source, time_column, time_type, key_columns,
    assigner, aggregates, allowed_lateness, result_table, emit)
VALUES ('bob3', 'windowing_bob', 'alice_events', 'ts', 'bigint', '{}',
    windowing.tumbling('10 milliseconds'), 'count(*)', '0', 'bob_results', 'append');
INSERT INTO windowing.pipeline (name, owner, source, time_column, time_type, key_columns,
    assigner, aggregates, allowed_lateness, result_table, late_table, emit)
VALUES ('bob3', 'windowing_bob', 'bob_events', 'ts', 'bigint', '{}',
    windowing.tumbling('10 milliseconds'), 'count(*)', '0', 'bob_results', 'alice_late', 'append');
-- what pause, resume and steps write stays the owner's
UPDATE windowing.pipeline SET state = 'paused', watermark = 5, last_error = NULL;
SELECT windowing.resume_pipeline('bob');
SELECT name, state, watermark FROM windowing.pipeline_stats WHERE name = 'bob';
RESET ROLE;
REVOKE SELECT ON bob_events FROM windowing_bob;
INSERT INTO bob_events VALUES (11);
SET ROLE windowing_bob;
SELECT windowing.process('bob');
RESET ROLE;
GRANT SELECT ON bob_events TO windowing_bob;
-- a step runs as the owner even when a superuser calls it: it cannot write
-- where the owner cannot, and the owner's code never runs as the superuser
REVOKE INSERT ON bob_results FROM windowing_bob;
SELECT windowing.flush('bob');
GRANT INSERT ON bob_results TO windowing_bob;
REVOKE INSERT ON bob_late FROM windowing_bob;
INSERT INTO bob_events VALUES (NULL);
SELECT windowing.process('bob');
GRANT INSERT ON bob_late TO windowing_bob;
SELECT windowing.process('bob');
SELECT window_start, count FROM bob_results ORDER BY 1;
SELECT event_time, reason FROM bob_late;

SET ROLE windowing_bob;
CREATE TABLE seen (who name, path text);
CREATE FUNCTION spy(v bigint) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.seen VALUES (current_user, current_setting('search_path'));
    PERFORM set_config('search_path', 'public', false);
    PERFORM set_config('work_mem', '64kB', false);
    RETURN v;
END $$;
SELECT windowing.create_pipeline('spied', 'bob_events', 'ts',
    assigner => windowing.tumbling('10 milliseconds'), aggregates => 'sum(public.spy(ts)) AS s',
    start => false, retention => 'consume');
RESET ROLE;
SELECT windowing.process('spied');
SELECT who, path FROM seen;
SHOW search_path;
SHOW work_mem;
SELECT * FROM windowing.open_windows('spied') ORDER BY window_start;

-- search_path tricks: objects in public, or in a schema searched first, do
-- not stand in for PostgreSQL's inside the extension
CREATE SCHEMA evil;
CREATE AGGREGATE evil.count(*) (SFUNC = int8inc, STYPE = int8, INITCOND = '1000');
CREATE AGGREGATE public.count(*) (SFUNC = int8inc, STYPE = int8, INITCOND = '2000');
CREATE FUNCTION evil.sum(int) RETURNS bigint LANGUAGE sql AS 'SELECT -1::bigint';
CREATE FUNCTION evil.always(int, int) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE FUNCTION evil.plus(int, int) RETURNS int LANGUAGE sql AS 'SELECT 0';
CREATE FUNCTION evil.less(bigint, bigint) RETURNS boolean LANGUAGE sql AS 'SELECT false';
CREATE OPERATOR evil.= (LEFTARG = int, RIGHTARG = int, FUNCTION = evil.always);
CREATE OPERATOR evil.+ (LEFTARG = int, RIGHTARG = int, FUNCTION = evil.plus);
CREATE OPERATOR evil.< (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = evil.less);
CREATE OPERATOR public.> (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = evil.less);
CREATE TABLE tricks (k int, ts bigint, v int);
SET search_path = evil, public, pg_catalog;
SELECT windowing.create_pipeline('tricks', 'tricks', 'ts', '{k}',
    windowing.tumbling('10 milliseconds'), 'count(*) AS n, sum(v) AS s, sum(v + 1) AS s1',
    allowed_lateness => '10 milliseconds', start => false, retention => 'consume');
INSERT INTO tricks VALUES (1, 1, 10), (2, 2, 20), (1, 3, 30), (1, 25, 1), (1, 4, 40);
SELECT windowing.process('tricks');
SELECT windowing.flush('tricks');
SELECT k, window_start, n, s, s1, fire_count, is_final FROM tricks_results ORDER BY 1, 2;
SELECT windowing.pause_pipeline('tricks');
SELECT name, state, watermark, rows_consumed, windows_fired FROM windowing.pipeline_stats
WHERE name = 'tricks';
SELECT windowing.drop_pipeline('tricks', drop_tables => true);
RESET search_path;
-- every PL/pgSQL or SQL function of the extension not parsed at creation
-- runs with a pinned search_path, but create_queue: it runs its caller's
-- CREATE TABLE as the caller would type it (types and the table's schema
-- found through the caller's search_path), as the caller, and names
-- everything else it calls with its schema
SELECT p.oid::regprocedure FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
WHERE p.pronamespace = 'windowing'::regnamespace
  AND (l.lanname = 'plpgsql' OR (l.lanname = 'sql' AND p.prosqlbody IS NULL))
  AND NOT coalesce(p.proconfig @> '{"search_path=pg_catalog, pg_temp"}', false);
SELECT p.prosecdef, p.proconfig FROM pg_proc p
WHERE p.oid = 'windowing.create_queue(text,text,text)'::regprocedure;

-- alice may hand her pipeline to a role she can act as, and only to one
-- (with its queue, whose owner's privileges a pipeline's owner must have)
CREATE ROLE windowing_team;
GRANT windowing_team TO windowing_alice, windowing_bob;
GRANT CREATE ON SCHEMA public TO windowing_team;
SET ROLE windowing_alice;
SELECT windowing.alter_pipeline_owner('alice', 'windowing_bob');
ALTER TABLE alice_events OWNER TO windowing_team;
SELECT windowing.alter_pipeline_owner('alice', 'windowing_team');
SELECT name, owner FROM windowing.pipelines WHERE name = 'alice';
-- writing the owner column does not get around that
UPDATE windowing.pipeline SET owner = 'windowing_bob' WHERE name = 'alice';
RESET ROLE;

-- Whoever runs a step, the owner's code runs as the owner: a superuser (as
-- the worker, which runs the same step) or a member of the owner's role.
-- An error there gives the caller back its own role and settings, whether
-- its transaction rolls back or an exception block catches the error.
TRUNCATE seen;
GRANT windowing_bob TO windowing_alice;
INSERT INTO bob_events VALUES (31);
SELECT windowing.process('spied');
INSERT INTO bob_events VALUES (32);
SET ROLE windowing_alice;
SET work_mem = '1MB';
SELECT windowing.process('spied');
SELECT current_user, current_setting('search_path') AS search_path,
       current_setting('work_mem') AS work_mem;
SELECT who, path FROM seen;
RESET ROLE;
CREATE OR REPLACE FUNCTION spy(v bigint) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('search_path', 'public', false);
    PERFORM set_config('work_mem', '64kB', false);
    IF v = 40 THEN
        RAISE EXCEPTION 'spy fails as %', current_user;
    END IF;
    RETURN v;
END $$;
INSERT INTO bob_events VALUES (40);
SET ROLE windowing_alice;
SELECT windowing.process('spied');
SELECT current_user, current_setting('search_path') AS search_path,
       current_setting('work_mem') AS work_mem;
DO $$
BEGIN
    PERFORM windowing.process('spied');
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'caught: %', SQLERRM;
    RAISE NOTICE 'back as %, search_path %, work_mem %', current_user,
        current_setting('search_path'), current_setting('work_mem');
END $$;
SELECT current_user, current_setting('search_path') AS search_path,
       current_setting('work_mem') AS work_mem;
RESET work_mem;
RESET ROLE;

-- a superuser may
SELECT windowing.pause_pipeline('alice');
SELECT name, state FROM windowing.pipelines ORDER BY name;
SELECT windowing.drop_pipeline('alice', drop_tables => true);
SELECT windowing.drop_pipeline('bob', drop_tables => true);
SELECT windowing.drop_pipeline('spied', drop_tables => true);
DROP TABLE alice_events, bob_events, seen, tricks;
DROP FUNCTION spy(bigint);
DROP OPERATOR public.> (bigint, bigint);
DROP SCHEMA evil CASCADE;
DROP AGGREGATE public.count(*);
REVOKE CREATE ON SCHEMA public FROM windowing_alice, windowing_bob, windowing_team;
DROP ROLE windowing_alice, windowing_bob, windowing_team;
