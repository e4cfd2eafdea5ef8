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
-- heap at every step: their steps find keys in memory and read others
-- back (which of the two holds the budget after the last step depends on
-- which outgrew it last: a store sheds only its own keys); flush() in a
-- new session reads back every key a count window needs (each fires its
-- incomplete window).
CREATE TABLE shed (k int, ts bigint, v int);
SELECT windowing.create_pipeline(name, 'shed', 'ts', '{k}', assigner,
    'count(*) AS n, sum(v) AS total', "trigger" => trig, emit => 'append',
    start => false, retention => 'keep') > 0 AS created
FROM (VALUES ('shed_count', windowing.counting(3), NULL),
             ('shed_rows', windowing.tumbling('1 day'), 'early every 2 rows')) AS p (name, assigner, trig);
CALL random_steps(0.25, '{shed}', '{shed_count,shed_rows}');
SELECT name, state_hits > 1000 AS found_in_memory, state_spilled_bytes = 0 AS not_spilled,
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

-- fire_spread and allowed lateness under the budget.  A window waits for
-- its key's moment after its end, and may be shed to the heap meanwhile:
-- a step that reaches the moment reads it back, from a read of the heap
-- by end that looks fire_spread further back.  A fired window waits for
-- its allowed lateness (30 seconds, longer than a step's read), then its
-- final row is written: the read takes the windows whose lateness may
-- end and those that may fire, not the ones between.  Windows of 20
-- seconds, a spread of 12 seconds; of 5 seconds with the lateness; each
-- pipeline on its own.
ALTER SYSTEM SET windowing.state_memory = '256kB';
SELECT pg_reload_conf();
\c
SET client_min_messages = warning;
CREATE TABLE shed_ws (k int, ts bigint, v int);
CREATE TABLE shed_wl (k int, ts bigint, v int);
SELECT windowing.create_pipeline(name, source, 'ts', '{k}', windowing.tumbling(size),
    'count(*) AS n, sum(v) AS total', fire_spread => spread, allowed_lateness => lateness,
    emit => 'append', start => false, retention => 'keep') > 0 AS created
FROM (VALUES ('shed_spread', 'shed_ws', interval '20 seconds', interval '12 seconds', interval '0'),
             ('shed_late', 'shed_wl', interval '5 seconds', NULL, interval '30 seconds'))
       AS p (name, source, size, spread, lateness);
CREATE VIEW shed_stats AS
SELECT name, memory_windows > 0 AS some_in_memory, state_spilled_bytes = 0 AS not_spilled,
       state_misses > 1000 AS read_back, state_memory_bytes <= 256 * 1024 AS within_budget,
       watermark_ms AS wm
FROM windowing.pipeline_stats;
CALL random_steps(0.75, '{shed_ws}', '{shed_spread}');
-- every window whose key's moment has passed (its end - 1 + 11999) has fired
SELECT some_in_memory, not_spilled, read_back, within_budget,
       (SELECT count(*) FROM shed_spread_results WHERE window_start + 31998 <= wm) AS fired,
       (SELECT count(*) FROM (SELECT DISTINCT k, ts - ts % 20000 FROM shed_ws
                              WHERE ts - ts % 20000 + 31998 <= wm) w) AS due
FROM shed_stats WHERE name = 'shed_spread';
\c
SET client_min_messages = warning;
CALL random_steps(0.75, '{shed_wl}', '{shed_late}');
-- every window has fired whose end the watermark passed, and has its final
-- row whose lateness it passed (its end - 1 + 30000)
SELECT some_in_memory, not_spilled, read_back, within_budget,
       (SELECT count(*) FILTER (WHERE NOT is_final) FROM shed_late_results
        WHERE window_start + 4999 <= wm) AS fired,
       (SELECT count(*) FILTER (WHERE is_final) FROM shed_late_results
        WHERE window_start + 34999 <= wm) AS final,
       (SELECT count(*) FROM (SELECT DISTINCT k, ts - ts % 5000 FROM shed_wl
                              WHERE ts - ts % 5000 + 4999 <= wm) w) AS ended,
       (SELECT count(*) FROM (SELECT DISTINCT k, ts - ts % 5000 FROM shed_wl
                              WHERE ts - ts % 5000 + 34999 <= wm) w) AS past_lateness
FROM shed_stats WHERE name = 'shed_late';
\c
SET client_min_messages = warning;
SELECT windowing.flush('shed_spread'), windowing.flush('shed_late');
-- each window fired once, as SQL says (without lateness, its one row is
-- final), and left
\i sql/include/differences.sql
CREATE VIEW shed_fired AS
SELECT 'spread' AS p, k, window_start, n, total FROM shed_spread_results WHERE is_final
UNION ALL
SELECT 'late', k, window_start, n, total FROM shed_late_results WHERE NOT is_final;
CREATE VIEW shed_sql AS
SELECT 'spread' AS p, k, ts - ts % 20000 AS window_start, count(*) AS n, sum(v) AS total
FROM shed_ws GROUP BY k, ts - ts % 20000
UNION ALL
SELECT 'late', k, ts - ts % 5000, count(*), sum(v) FROM shed_wl GROUP BY k, ts - ts % 5000;
SELECT pg_temp.differences('shed_fired', 'shed_sql', 'p, k, window_start, n, total') AS differences,
       (SELECT count(*) FROM shed_late_results WHERE is_final) =
       (SELECT count(*) FROM (SELECT DISTINCT k, ts - ts % 5000 FROM shed_wl) w) AS all_final,
       (SELECT sum(open_windows) FROM windowing.pipeline_stats WHERE name LIKE 'shed_%') AS open_windows;
ALTER SYSTEM RESET windowing.state_memory;
SELECT pg_reload_conf();
DROP VIEW shed_stats, shed_fired, shed_sql;
SELECT windowing.drop_pipeline(name, true) FROM (VALUES ('shed_spread'), ('shed_late')) AS p (name);
DROP TABLE shed_ws, shed_wl;
DROP PROCEDURE random_steps;

-- A step that holds none of a pipeline's state (after a restart; here
-- after _forget_state) reads back, by their end, the windows that may fire
-- from the watermark it begins at, and those kept for their allowed
-- lateness as their cleanup comes: not every kept window.  100 keys whose
-- windows fired and are kept for an hour are not read; the 10 whose
-- windows the step fires are (their rows read them first).
CREATE TABLE idle_keys (k int, ts bigint, v int);
SELECT windowing.create_pipeline('idle_keys', 'idle_keys', 'ts', '{k}', windowing.tumbling('10 seconds'),
    'count(*) AS n', max_out_of_orderness => '0', allowed_lateness => '1 hour',
    start => false, retention => 'keep') > 0 AS created;
INSERT INTO idle_keys SELECT k, 1000, 1 FROM generate_series(1, 100) k;
INSERT INTO idle_keys SELECT k, 15000, 1 FROM generate_series(101, 110) k;
SELECT windowing.process('idle_keys');
SELECT windowing._forget_state(id) FROM windowing.pipeline WHERE name = 'idle_keys';
CREATE TEMP TABLE idle_before AS SELECT state_misses FROM windowing.pipeline_stats WHERE name = 'idle_keys';
INSERT INTO idle_keys SELECT k, 25000, 1 FROM generate_series(101, 110) k;
SELECT windowing.process('idle_keys');
SELECT s.state_misses - b.state_misses AS keys_read, s.memory_windows
FROM windowing.pipeline_stats s, idle_before b WHERE name = 'idle_keys';
SELECT windowing.flush('idle_keys');
SELECT window_start, count(*), sum(n), bool_and(fire_count = 1 AND is_final) AS once_and_final
FROM idle_keys_results GROUP BY window_start ORDER BY window_start;
SELECT windowing.drop_pipeline('idle_keys', true);
DROP TABLE idle_keys, idle_before;
