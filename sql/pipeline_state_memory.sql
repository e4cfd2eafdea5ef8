-- The memory a pipeline's windows held in its process comes back once
-- they leave, the store's table of keys too: a hundred thousand keys'
-- windows fire and leave, and one key's is left.
CREATE TABLE many (k int, ts bigint, v int);
SELECT windowing.create_pipeline('many_t', 'many', 'ts', '{k}', windowing.tumbling('1 second'),
    'count(*) AS n', start => false, retention => 'consume') > 0 AS created;
INSERT INTO many SELECT i, 500, 1 FROM generate_series(1, 100000) i;
SELECT windowing.process('many_t') AS consumed;
SELECT memory_windows, state_memory_bytes > 10000000 AS over_10mb
FROM windowing.pipeline_stats WHERE name = 'many_t';
INSERT INTO many VALUES (1, 5000, 1);
SELECT windowing.process('many_t') AS consumed;
SELECT memory_windows, state_memory_bytes < 1000000 AS under_1mb
FROM windowing.pipeline_stats WHERE name = 'many_t';
SELECT count(*) AS fired, sum(n) AS rows_in_windows FROM many_t_results;
SELECT windowing.drop_pipeline('many_t', true);
DROP TABLE many;

-- A store counts against windowing.state_memory what its windows and keys
-- take, not the rest of the block it carves them from: two pipelines over
-- 3,000 keys each, stepped in turn in one session under 256kB, where a
-- store that had shed its windows would count up to 64kB of empty block
-- (111kB with no window in memory), leaving the budget to neither, and
-- the steps found 3,543 of their 24,000 keys in memory.
ALTER SYSTEM SET windowing.state_memory = '256kB';
SELECT pg_reload_conf();
\c
SET client_min_messages = warning;
-- 60 steps: 200 rows of keys drawn from 3,000 into each table, committed,
-- then a step of each pipeline, committed
CREATE PROCEDURE random_steps(seed float8, tables text[], pipelines text[])
LANGUAGE plpgsql AS $$
DECLARE
    name text;
BEGIN
    PERFORM setseed(seed);
    FOR s IN 1..60 LOOP
        FOREACH name IN ARRAY tables LOOP
            EXECUTE format('INSERT INTO %I SELECT (random() * 3000)::int, $1 * 1000 + i, i
                            FROM generate_series(1, 200) i', name) USING s;
        END LOOP;
        COMMIT;
        FOREACH name IN ARRAY pipelines LOOP
            PERFORM windowing.process(name);
        END LOOP;
        COMMIT;
    END LOOP;
END $$;
CREATE TABLE budget_a (k int, ts bigint, v int);
CREATE TABLE budget_b (k int, ts bigint, v int);
SELECT windowing.create_pipeline(name, name, 'ts', '{k}', windowing.tumbling('1 day'),
    'count(*) AS n', start => false, retention => 'consume') > 0 AS created
FROM (VALUES ('budget_a'), ('budget_b')) AS p (name);
CALL random_steps(0.5, '{budget_a,budget_b}', '{budget_a,budget_b}');
SELECT name, open_windows, state_memory_bytes <= 16384 + 400 * memory_windows AS bytes_for_windows
FROM windowing.pipeline_stats WHERE name LIKE 'budget_%' ORDER BY name;
SELECT sum(state_memory_bytes) <= 256 * 1024 AS within_budget,
       sum(state_hits) + sum(state_misses) AS keys_looked_up, sum(state_hits) > 5000 AS hits_over_5000
FROM windowing.pipeline_stats WHERE name LIKE 'budget_%';
SELECT windowing.flush(name) FROM (VALUES ('budget_a'), ('budget_b')) AS p (name);
SELECT count(*) AS windows, sum(n) AS rows_in_windows FROM budget_a_results;
SELECT windowing.drop_pipeline(name, true) FROM (VALUES ('budget_a'), ('budget_b')) AS p (name);
DROP TABLE budget_a, budget_b;

-- Under the same budget, count windows and early firing by rows shed keys
-- as tumbling windows do, rather than reading all of their state from the
-- heap at every step; flush() in a new session reads back every key a
-- count window needs (each fires its incomplete window).
CREATE TABLE shed (k int, ts bigint, v int);
SELECT windowing.create_pipeline(name, 'shed', 'ts', '{k}', assigner,
    'count(*) AS n, sum(v) AS total', "trigger" => trig, emit => 'append',
    start => false, retention => 'keep') > 0 AS created
FROM (VALUES ('shed_count', windowing.counting(3), NULL),
             ('shed_rows', windowing.tumbling('1 day'), 'early every 2 rows')) AS p (name, assigner, trig);
CALL random_steps(0.25, '{shed}', '{shed_count,shed_rows}');
SELECT name, memory_windows > 0 AS some_in_memory, state_spilled_bytes = 0 AS not_spilled,
       state_misses > 1000 AS read_back
FROM windowing.pipeline_stats WHERE name LIKE 'shed_%' ORDER BY name;
SELECT sum(state_memory_bytes) <= 256 * 1024 AS within_budget
FROM windowing.pipeline_stats WHERE name LIKE 'shed_%';
\c
SET client_min_messages = warning;
SELECT windowing.flush('shed_count'), windowing.flush('shed_rows');
-- a count window of 3 rows per key's 3 rows, then one of the rest
SELECT (SELECT count(*) FROM shed_count_results) =
       (SELECT sum(ceil(n / 3.0)) FROM (SELECT count(*) AS n FROM shed GROUP BY k) c) AS count_windows,
       (SELECT sum(n) FROM shed_count_results) = (SELECT count(*) FROM shed) AS rows_counted,
       (SELECT sum(total) FROM shed_count_results) = (SELECT sum(v) FROM shed) AS values_summed;
-- every second row of a key fires its window early, and flush() on time
SELECT (SELECT count(*) FROM shed_rows_results WHERE pane = 'early') =
       (SELECT sum(n / 2) FROM (SELECT count(*) AS n FROM shed GROUP BY k) c) AS early_firings,
       (SELECT array_agg(k || ':' || n || ':' || total ORDER BY k) FROM shed_rows_results WHERE pane = 'on_time') =
       (SELECT array_agg(k || ':' || n || ':' || t ORDER BY k)
        FROM (SELECT k, count(*) AS n, sum(v) AS t FROM shed GROUP BY k) c) AS on_time_windows;
SELECT windowing.drop_pipeline(name, true) FROM (VALUES ('shed_count'), ('shed_rows')) AS p (name);
DROP TABLE shed;

-- So does early firing every interval, on its own (the stores of a
-- process share its budget).  Each step moves the watermark by a second:
-- every tenth passes a multiple of 10 seconds, where each window with rows
-- since it last fired fires early, and the step reads back the keys of
-- such windows.
CREATE TABLE shed_e (k int, ts bigint, v int);
SELECT windowing.create_pipeline('shed_every', 'shed_e', 'ts', '{k}', windowing.tumbling('1 day'),
    'count(*) AS n, sum(v) AS total', "trigger" => 'early every 10 seconds', emit => 'append',
    start => false, retention => 'keep') > 0 AS created;
CALL random_steps(0.25, '{shed_e}', '{shed_every}');
SELECT memory_windows > 0 AS some_in_memory, state_spilled_bytes = 0 AS not_spilled,
       state_misses > 1000 AS read_back, state_memory_bytes <= 256 * 1024 AS within_budget
FROM windowing.pipeline_stats WHERE name = 'shed_every';
\c
SET client_min_messages = warning;
SELECT windowing.flush('shed_every');
ALTER SYSTEM RESET windowing.state_memory;
SELECT pg_reload_conf();
\c
SET client_min_messages = warning;
-- the same firings as the pipeline stepped with all of its state in
-- memory, in as few steps as it takes
SELECT windowing.create_pipeline('whole_every', 'shed_e', 'ts', '{k}', windowing.tumbling('1 day'),
    'count(*) AS n, sum(v) AS total', "trigger" => 'early every 10 seconds', emit => 'append',
    start => false, retention => 'keep') > 0 AS created;
DO $$ BEGIN WHILE windowing.process('whole_every') > 0 LOOP END LOOP; END $$;
SELECT windowing.flush('whole_every');
SELECT count(*) FILTER (WHERE pane = 'early') > 1000 AS fired_early,
       (SELECT count(*) FROM (
          (SELECT k, n, total, fire_count, pane FROM shed_every_results
           EXCEPT ALL SELECT k, n, total, fire_count, pane FROM whole_every_results)
          UNION ALL
          (SELECT k, n, total, fire_count, pane FROM whole_every_results
           EXCEPT ALL SELECT k, n, total, fire_count, pane FROM shed_every_results)) d) AS differences
FROM shed_every_results;
SELECT windowing.drop_pipeline(name, true) FROM (VALUES ('shed_every'), ('whole_every')) AS p (name);
DROP TABLE shed_e;
DROP PROCEDURE random_steps;
