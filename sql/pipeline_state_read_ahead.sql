-- A store started without the pipeline's state (as after a restart) reads
-- the keys its rows name from the heap, and, once it holds windows, reads
-- ahead at the end of each step four windows for each row whose key the
-- step looked up, whole keys in key order from where it stopped: it holds every key
-- after a few steps, and the results are those of a pipeline whose state
-- never left memory.
CREATE TABLE ra (k int, ts bigint, v int);
SELECT windowing.create_pipeline(name, 'ra', 'ts', '{k}', windowing.tumbling('1 second'),
    'count(*) AS n, sum(v) AS s', start => false, retention => 'consume') > 0 AS created
FROM (VALUES ('ra_p'), ('ra_ref')) p(name);
INSERT INTO ra SELECT i, 500, i FROM generate_series(1, 1000) i;
SELECT windowing.process('ra_p') AS consumed, windowing.process('ra_ref') AS consumed_ref;
SELECT windowing._forget_state(id) FROM windowing.pipeline WHERE name = 'ra_p';
CREATE VIEW ra_stats AS
SELECT open_windows, memory_windows, state_misses FROM windowing.pipeline_stats WHERE name = 'ra_p';
-- the first step reads its ten keys alone: the store held no window to
-- measure the rest by
INSERT INTO ra SELECT k, 600, 1 FROM generate_series(991, 1000) k;
SELECT windowing.process('ra_p') AS consumed;
SELECT * FROM ra_stats;
-- the next reads its ten, and forty more from the first key on
INSERT INTO ra SELECT k, 600, 1 FROM generate_series(981, 990) k;
SELECT windowing.process('ra_p') AS consumed;
SELECT * FROM ra_stats;
-- steps of a key it knows read four more each, past the keys the store
-- knows, until every key is in memory: (1000 - 60) / 4 steps
DO $$
DECLARE
    steps int := 0;
BEGIN
    WHILE steps < 1000 AND (SELECT memory_windows < 1000 FROM ra_stats) LOOP
        INSERT INTO ra VALUES (991, 600, 1);
        COMMIT;
        PERFORM windowing.process('ra_p');
        COMMIT;
        steps := steps + 1;
    END LOOP;
    RAISE NOTICE '% steps', steps;
END $$;
-- a step over every key reads none of them from the heap
INSERT INTO ra SELECT k, 700, 1 FROM generate_series(1, 1000) k;
SELECT windowing.process('ra_p') AS consumed;
SELECT * FROM ra_stats;
-- the windows fire alike
INSERT INTO ra VALUES (1, 5000, 1);
SELECT windowing.process('ra_p') AS consumed, windowing.process('ra_ref') AS consumed_ref;
SELECT count(*) AS windows, sum(n) AS n, sum(s) AS s FROM ra_p_results;
SELECT count(*) AS differ FROM (
    (SELECT k, window_start, n, s FROM ra_p_results EXCEPT SELECT k, window_start, n, s FROM ra_ref_results)
    UNION ALL
    (SELECT k, window_start, n, s FROM ra_ref_results EXCEPT SELECT k, window_start, n, s FROM ra_p_results)) d;
SELECT windowing.drop_pipeline(name, true) FROM (VALUES ('ra_p'), ('ra_ref')) p(name);
DROP VIEW ra_stats;
DROP TABLE ra;
