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
    start => false);
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
SELECT count(*) FROM windowing.pipeline;
UPDATE windowing.pipeline SET state = 'failed';
DELETE FROM windowing.window_state;
-- nor build a pipeline over a table it cannot alter
SELECT windowing.create_pipeline('steal', 'alice_events', 'ts',
    assigner => windowing.tumbling('10 milliseconds'));
-- a pipeline of bob's reads with bob's rights
CREATE TABLE bob_events (ts bigint);
SELECT windowing.create_pipeline('bob', 'bob_events', 'ts',
    assigner => windowing.tumbling('10 milliseconds'), start => false);
RESET ROLE;
REVOKE SELECT ON bob_events FROM windowing_bob;
INSERT INTO bob_events VALUES (1);
SET ROLE windowing_bob;
SELECT windowing.process('bob');
RESET ROLE;

-- a superuser may
SELECT windowing.pause_pipeline('alice');
SELECT name, state FROM windowing.pipelines ORDER BY name;
SELECT windowing.drop_pipeline('alice', drop_tables => true);
SELECT windowing.drop_pipeline('bob', drop_tables => true);
DROP TABLE alice_events, bob_events;
REVOKE CREATE ON SCHEMA public FROM windowing_alice, windowing_bob;
DROP ROLE windowing_alice, windowing_bob;
