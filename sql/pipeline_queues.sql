-- A table becomes a queue only by its owner's choice of what becomes of its
-- rows: 'consume' (emptied once read) or 'keep' (never emptied).
\set SHOW_CONTEXT never
CREATE TABLE history (k int, ts bigint);
INSERT INTO history VALUES (1, 1), (1, 2), (2, 3);
-- no choice, no pipeline: nothing is added to the table
SELECT windowing.create_pipeline('h', 'history', 'ts', '{k}', windowing.tumbling('10 milliseconds'));
SELECT windowing.create_pipeline('h', 'history', 'ts', '{k}', windowing.tumbling('10 milliseconds'),
                                 retention => 'forever');
SELECT attname FROM pg_attribute WHERE attrelid = 'history'::regclass AND attnum > 0 ORDER BY attnum;
-- kept: the rows already there are numbered and read like new ones
SELECT windowing.create_pipeline('h', 'history', 'ts', '{k}', windowing.tumbling('10 milliseconds'),
                                 start => false, retention => 'keep');
SELECT * FROM windowing.queues;
SELECT k, ts, windowing_seq FROM history ORDER BY windowing_seq;
SELECT windowing.process('h');
SELECT windowing.flush('h');
SELECT k, window_start, count FROM h_results ORDER BY 2, 1;
-- a second pipeline agrees, or says nothing
SELECT windowing.create_pipeline('h2', 'history', 'ts', retention => 'consume',
                                 assigner => windowing.tumbling('10 milliseconds'));
SELECT windowing.create_pipeline('h2', 'history', 'ts', assigner => windowing.tumbling('10 milliseconds'),
                                 start => false);
SELECT * FROM windowing.queues;
-- the owner changes it; others may not
SELECT windowing.alter_queue('history', 'consume');
SELECT * FROM windowing.queues;
SELECT windowing.alter_queue('history', 'keep');
SELECT windowing.alter_queue('history', NULL);
CREATE ROLE windowing_queue_stranger;
SET ROLE windowing_queue_stranger;
SELECT * FROM windowing.queues;
SELECT windowing.alter_queue('history', 'consume');
RESET ROLE;
SELECT windowing.drop_pipeline('h', drop_tables => true),
       windowing.drop_pipeline('h2', drop_tables => true);
-- the queue stays one without pipelines
SELECT * FROM windowing.queues;

-- an existing table made a consumed queue says so
CREATE TABLE clicks (k int, ts bigint);
SELECT windowing.create_pipeline('c', 'clicks', 'ts', '{k}', windowing.tumbling('10 milliseconds'),
                                 start => false, retention => 'consume');
SELECT windowing.drop_pipeline('c', drop_tables => true);
DROP TABLE clicks;

-- a queue made by the extension: the caller's, consumed, numbered by its
-- own identity sequence
SELECT windowing.create_queue('made', 'k int, ts bigint, v numeric');
SELECT windowing.create_queue('made', 'k int');
SELECT windowing.create_queue('"Made Too"', 'k int, ts bigint', retention => 'keep');
SELECT windowing.create_queue(NULL, 'k int');
SELECT * FROM windowing.queues ORDER BY queue::text;
SELECT attname, format_type(atttypid, atttypmod), attnotnull, attidentity
FROM pg_attribute WHERE attrelid = 'made'::regclass AND attnum > 0 ORDER BY attnum;
SELECT pg_get_serial_sequence('made', 'windowing_seq') IS NOT NULL AS own_sequence;
SELECT windowing.create_pipeline('m', 'made', 'ts', '{k}', windowing.tumbling('10 milliseconds'),
                                 'sum(v) AS total', start => false);
INSERT INTO made VALUES (1, 1, 1.5), (1, 5, 2), (2, 12, 4);
SELECT windowing.process('m');
SELECT k, window_start, total FROM m_results ORDER BY 2, 1;

-- a column of that name that is not an arrival number is refused
CREATE TABLE odd (k int, ts bigint, windowing_seq bigint);
SELECT windowing.alter_queue('odd', 'keep');
DROP TABLE odd;

-- Dropping the extension leaves producers' inserts working: the columns'
-- defaults are the table's own.
DROP EXTENSION windowing;
DROP EXTENSION windowing CASCADE;
INSERT INTO made (k, ts, v) VALUES (3, 20, 1);
INSERT INTO history (k, ts) VALUES (3, 20);
SELECT k, ts, windowing_seq FROM made ORDER BY windowing_seq;
SELECT tgname FROM pg_trigger WHERE tgrelid IN ('made'::regclass, 'history'::regclass);
DROP TABLE "Made Too", history, m_results, m_late;
DROP ROLE windowing_queue_stranger;

-- A new install numbers pipelines from 1 again: a new pipeline with the id
-- and step count of a dropped one ("m", 4 and 1) starts from its own
-- state, not from what shared memory kept of the old one's.
CREATE EXTENSION windowing;
SELECT setval('windowing.pipeline_id_seq', 3);
SELECT windowing.create_pipeline('m_again', 'made', 'ts', '{k}', windowing.tumbling('100 milliseconds'),
                                 'count(*) AS n, max(ts) AS newest', start => false, retention => 'keep');
SELECT id FROM windowing.pipeline;
-- the second step of one transaction looks for the first's image in
-- shared memory (it is published at commit) and must not find the old one
BEGIN;
SELECT windowing.process('m_again', 1);
SELECT windowing.process('m_again', 1);
COMMIT;
SELECT windowing.process('m_again');
SELECT windowing.flush('m_again');
SELECT k, window_start, n, newest FROM m_again_results ORDER BY 2, 1;
SELECT windowing.drop_pipeline('m_again', drop_tables => true);
DROP TABLE made;
-- the tests that follow start from a fresh install (pipeline ids from 1)
DROP EXTENSION windowing;
CREATE EXTENSION windowing;
