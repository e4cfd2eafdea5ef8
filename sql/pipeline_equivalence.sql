-- Whatever its steps, wherever its state is read from and whatever the
-- transactions around them, a pipeline gives the results of one step over
-- all of its rows: each pipeline below ("x") reads rows committed in 30
-- batches over 3 to 500 keys (5% of them up to 600 ms late), in steps of
-- random sizes, some rolled back with their transaction or with a
-- subtransaction, some two in one transaction, its state now and then
-- forgotten (read back from the heap, as after a restart), some as
-- several parts whose number changes; its twin ("r") reads every row in
-- one step.  Every kind of window, trigger and evictor, with allowed
-- lateness and fire_spread, under a budget of 16kB (nearly every key on
-- the heap), then of 256kB.  The differences, over every column but
-- fired_at and routed_at, must be none.
\set SHOW_CONTEXT never
SET client_min_messages = warning;

CREATE PROCEDURE equivalence_steps(tab text, x text, seed float8, nkeys int, parted boolean)
LANGUAGE plpgsql AS $$
DECLARE
    m int;
    draw float8;
BEGIN
    PERFORM setseed(seed);
    FOR s IN 1..30 LOOP
        EXECUTE format('INSERT INTO %I SELECT (random() * $2)::int,
                          $1 * 40 + (random() * 60)::int
                              - CASE WHEN random() < 0.05 THEN (random() * 600)::int ELSE 0 END,
                          (random() * 100)::int
                        FROM generate_series(1, 100)', tab) USING s, nkeys;
        COMMIT;
        FOR j IN 1..(1 + (random() * 2)::int) LOOP
            m := CASE WHEN random() < 0.3 THEN NULL ELSE 1 + (random() * 100)::int END;
            draw := random();
            IF draw < 0.1 THEN
                PERFORM windowing.process(x, max_rows => m);
                ROLLBACK;
            ELSIF draw < 0.2 THEN
                BEGIN
                    PERFORM windowing.process(x, max_rows => m);
                    RAISE EXCEPTION 'undone';
                EXCEPTION WHEN raise_exception THEN NULL;
                END;
                COMMIT;
            ELSIF draw < 0.3 THEN
                PERFORM windowing.process(x, max_rows => m);
                PERFORM windowing.process(x, max_rows => m);
                COMMIT;
            ELSE
                PERFORM windowing.process(x, max_rows => m);
                COMMIT;
            END IF;
        END LOOP;
        IF random() < 0.15 THEN
            PERFORM windowing._forget_state(id) FROM windowing.pipeline WHERE name = x;
            COMMIT;
        END IF;
        IF parted AND random() < 0.15 THEN
            PERFORM windowing.alter_pipeline(x, parallelism => 1 + (random() * 2)::int);
            COMMIT;
        END IF;
    END LOOP;
    WHILE windowing.process(x) > 0 LOOP
        COMMIT;
    END LOOP;
    PERFORM windowing.flush(x);
    COMMIT;
END $$;

CREATE TABLE equivalence_cases (
    id int PRIMARY KEY, assigner windowing.assigner, aggregates text, trig text,
    lateness interval, spread interval, emit text, evictor text, ooo interval,
    parallelism int, nkeys int, seed float8);
INSERT INTO equivalence_cases VALUES
 (1, windowing.tumbling('100 milliseconds'), 'count(*) AS n, sum(v) AS total', NULL, '200 milliseconds', '60 milliseconds', 'upsert', NULL, '20 milliseconds', 1, 50, 0.53),
 (2, windowing.tumbling('100 milliseconds'), 'count(*) AS n, max(v) AS mx', NULL, '200 milliseconds', '60 milliseconds', 'append', 'time 30 milliseconds', '20 milliseconds', 1, 50, 0.45),
 (3, windowing.tumbling('100 milliseconds', "offset" => '30 milliseconds'), 'count(*) AS n, sum(v) AS total', 'early every 30 milliseconds', '1 second', NULL, 'upsert', NULL, '150 milliseconds', 2, 500, 0.11),
 (4, windowing.tumbling('100 milliseconds'), 'sum(v) * 2 + count(*) AS expr, bool_and(v < 90) AS ba', 'purging early every 30 milliseconds', '0', NULL, 'append', NULL, '20 milliseconds', 1, 500, 0.12),
 (5, windowing.tumbling('100 milliseconds'), 'count(*) AS n, sum(v) AS total', 'early when v moves more than 40', '200 milliseconds', NULL, 'upsert', 'delta 50 of v', '0', 1, 50, 0.13),
 (6, windowing.hopping('100 milliseconds', '25 milliseconds'), 'count(DISTINCT v) AS d, array_agg(v ORDER BY v, k) AS a', NULL, '200 milliseconds', NULL, 'upsert', NULL, '20 milliseconds', 1, 50, 0.14),
 (7, windowing.hopping('90 milliseconds', '60 milliseconds'), 'count(*) AS n, sum(v) AS total', 'early every 3 rows', '0', NULL, 'append', NULL, '20 milliseconds', 2, 50, 0.15),
 (8, windowing.hopping('100 milliseconds', '25 milliseconds'), 'count(*) AS n, sum(v) AS total', 'early every 30 milliseconds', '1 second', NULL, 'upsert', 'count 3', '20 milliseconds', 1, 3, 0.16),
 (9, windowing.cumulating('25 milliseconds', '100 milliseconds'), 'windowing.max_by(k, v) AS mb, avg(v) AS av', NULL, '200 milliseconds', NULL, 'upsert', NULL, '150 milliseconds', 1, 500, 0.17),
 (10, windowing.cumulating('25 milliseconds', '100 milliseconds'), 'count(*) AS n, sum(v) AS total', 'purging early every 4 rows', '0', NULL, 'upsert', NULL, '20 milliseconds', 1, 50, 0.18),
 (11, windowing.session('40 milliseconds'), 'string_agg(v::text, '','' ORDER BY v, k) AS s, count(*) FILTER (WHERE v > 50) AS big', NULL, '200 milliseconds', NULL, 'upsert', NULL, '20 milliseconds', 3, 50, 0.19),
 (12, windowing.session('40 milliseconds'), 'count(*) AS n, sum(v) AS total', 'early every 30 milliseconds', '1 second', NULL, 'append', 'count 2 after', '20 milliseconds', 1, 50, 0.21),
 (13, windowing.session('40 milliseconds'), 'count(*) AS n, sum(v) AS total', 'early every 3 rows', '0', NULL, 'upsert', NULL, '0', 1, 500, 0.22),
 (14, windowing.counting(5), 'count(*) AS n, sum(v) AS total', NULL, '0', NULL, 'upsert', NULL, '20 milliseconds', 2, 50, 0.23),
 (15, windowing.counting(6, slide => 2), 'array_agg(v ORDER BY v, k) AS a', NULL, '0', NULL, 'append', NULL, '20 milliseconds', 1, 3, 0.24),
 (16, windowing.global(), 'windowing.min_by(k, v) AS nb, count(*) AS n', 'purging early every 4 rows', '0', NULL, 'upsert', 'delta 50 of v', '20 milliseconds', 1, 50, 0.25),
 (17, windowing.tumbling('100 milliseconds'), 'count(*) AS n, sum(v) AS total', NULL, '1 second', '60 milliseconds', 'upsert', NULL, '150 milliseconds', 3, 500, 0.26),
 (18, windowing.hopping('100 milliseconds', '25 milliseconds'), 'count(*) AS n, sum(v) AS total', NULL, '1 second', NULL, 'append', NULL, '0', 3, 500, 0.27),
 (19, windowing.session('40 milliseconds'), 'count(*) AS n, sum(v) AS total', NULL, '1 second', NULL, 'upsert', NULL, '150 milliseconds', 2, 500, 0.28),
 (20, windowing.cumulating('25 milliseconds', '100 milliseconds'), 'count(*) AS n, sum(v) AS total', 'early every 3 rows', '200 milliseconds', NULL, 'upsert', 'count 3', '20 milliseconds', 2, 3, 0.29);

-- a table's columns but fired_at and routed_at (when the step ran)
CREATE FUNCTION equivalence_columns(rel text) RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute
    WHERE attrelid = rel::regclass AND attnum > 0 AND NOT attisdropped
      AND attname NOT IN ('fired_at', 'routed_at')
$$;
CREATE TABLE equivalence (id int, budget text, differences bigint, late_differences bigint,
                          result_rows bigint, late_rows bigint);
CREATE PROCEDURE equivalence_run(budget text)
LANGUAGE plpgsql AS $$
DECLARE
    c equivalence_cases;
    t text;
BEGIN
    FOR c IN SELECT * FROM equivalence_cases ORDER BY id LOOP
        t := 'eq' || c.id;
        EXECUTE format('CREATE TABLE %I (k int, ts bigint, v int)', t);
        PERFORM windowing.create_pipeline(n || c.id, t, 'ts', '{k}', c.assigner, c.aggregates,
            max_out_of_orderness => c.ooo, allowed_lateness => c.lateness, emit => c.emit,
            "trigger" => c.trig, evictor => c.evictor, fire_spread => c.spread,
            parallelism => CASE n WHEN 'x' THEN c.parallelism ELSE 1 END,
            start => false, retention => 'consume')
        FROM unnest(ARRAY['x', 'r']) n;
        COMMIT;
        CALL equivalence_steps(t, 'x' || c.id, c.seed, c.nkeys, c.parallelism > 1);
        WHILE windowing.process('r' || c.id) > 0 LOOP
            COMMIT;
        END LOOP;
        PERFORM windowing.flush('r' || c.id);
        COMMIT;
        EXECUTE format('INSERT INTO equivalence SELECT $1, $2, $3, $4, '
                       '(SELECT count(*) FROM %I), (SELECT count(*) FROM %I)',
                       'r' || c.id || '_results', 'r' || c.id || '_late')
        USING c.id, budget,
              pg_temp.differences('x' || c.id || '_results', 'r' || c.id || '_results',
                                  equivalence_columns('x' || c.id || '_results')),
              pg_temp.differences('x' || c.id || '_late', 'r' || c.id || '_late',
                                  equivalence_columns('x' || c.id || '_late'));
        PERFORM windowing.drop_pipeline(n || c.id, true) FROM unnest(ARRAY['x', 'r']) n;
        EXECUTE format('DROP TABLE %I', t);
        COMMIT;
    END LOOP;
END $$;

ALTER SYSTEM SET windowing.state_memory = '16kB';
SELECT pg_reload_conf();
\c
SET client_min_messages = warning;
\i sql/include/differences.sql
CALL equivalence_run('16kB');
ALTER SYSTEM SET windowing.state_memory = '256kB';
SELECT pg_reload_conf();
\c
SET client_min_messages = warning;
\i sql/include/differences.sql
CALL equivalence_run('256kB');
ALTER SYSTEM RESET windowing.state_memory;
SELECT pg_reload_conf();
\c
SET client_min_messages = warning;

SELECT c.id, windowing.describe(c.assigner) AS assigner, c.trig, c.lateness, c.spread, c.evictor,
       e.budget, e.differences, e.late_differences, e.result_rows, e.late_rows
FROM equivalence_cases c JOIN equivalence e USING (id) ORDER BY id, budget;
DROP PROCEDURE equivalence_steps, equivalence_run;
DROP FUNCTION equivalence_columns;
DROP TABLE equivalence_cases, equivalence;

-- Another early interval, and a longer allowed lateness, given now and
-- then (by alter_pipeline, once both have read the same rows) to a
-- pipeline whose keys go to the heap (32kB) and to its twin: a window
-- keeps the early timer it has, moved to the next multiple of the new
-- interval, where a read of the heap looks for early timers.  (Kept
-- where it was, off the new interval's multiples, a window on the heap
-- missed it: 232 rows differed.)
ALTER SYSTEM SET windowing.state_memory = '32kB';
SELECT pg_reload_conf();
\c
SET client_min_messages = warning;
\i sql/include/differences.sql
CREATE PROCEDURE alter_steps(seed float8, triggers text[], forget float8)
LANGUAGE plpgsql AS $$
DECLARE
    lateness interval;
    later text;
BEGIN
    PERFORM setseed(seed);
    FOR s IN 1..47 LOOP
        INSERT INTO alter_q SELECT (random() * 50)::int,
            s * 40 + (random() * 60)::int - CASE WHEN random() < 0.05 THEN (random() * 600)::int ELSE 0 END,
            (random() * 100)::int
        FROM generate_series(1, 99);
        COMMIT;
        FOR j IN 1..(1 + (random() * 2)::int) LOOP
            PERFORM windowing.process('alter_x', max_rows => CASE WHEN random() < 0.3 THEN NULL
                                                                 ELSE 1 + (random() * 99)::int END);
            COMMIT;
        END LOOP;
        IF random() < forget THEN
            PERFORM windowing._forget_state(id) FROM windowing.pipeline WHERE name = 'alter_x';
            COMMIT;
        END IF;
        IF random() < 0.15 THEN
            WHILE windowing.process('alter_x') > 0 LOOP
                COMMIT;
            END LOOP;
            WHILE windowing.process('alter_r') > 0 LOOP
                COMMIT;
            END LOOP;
            SELECT allowed_lateness + (ARRAY['0', '100 milliseconds', '1 second'])[1 + (random() * 2)::int]::interval
            INTO lateness FROM windowing.pipelines WHERE name = 'alter_x';
            later := triggers[1 + (random() * (cardinality(triggers) - 1))::int];
            PERFORM windowing.alter_pipeline(name, allowed_lateness => lateness, "trigger" => later)
            FROM (VALUES ('alter_x'), ('alter_r')) AS p (name);
            COMMIT;
        END IF;
    END LOOP;
    WHILE windowing.process('alter_x') > 0 LOOP
        COMMIT;
    END LOOP;
    PERFORM windowing.flush('alter_x');
    COMMIT;
    WHILE windowing.process('alter_r') > 0 LOOP
        COMMIT;
    END LOOP;
    PERFORM windowing.flush('alter_r');
END $$;
CREATE TABLE alter_q (k int, ts bigint, v int);
SELECT windowing.create_pipeline(name, 'alter_q', 'ts', '{k}',
    windowing.tumbling('100 milliseconds', "offset" => '30 milliseconds'),
    'count(*) AS n, sum(v) AS total, max(v) AS mx', max_out_of_orderness => '20 milliseconds',
    allowed_lateness => '100 milliseconds', emit => 'append', "trigger" => 'early every 30 milliseconds',
    start => false, retention => 'consume') > 0 AS created
FROM (VALUES ('alter_x'), ('alter_r')) AS p (name);
CALL alter_steps(0.77, '{"early every 30 milliseconds","early every 3 rows","early every 50 milliseconds"}', 0);
SELECT name, "trigger", allowed_lateness FROM windowing.pipelines WHERE name LIKE 'alter_%' ORDER BY name;
SELECT pg_temp.differences('alter_x_results', 'alter_r_results', 'k, window_start, n, total, mx, fire_count, is_final, pane')
       AS differences,
       pg_temp.differences('alter_x_late', 'alter_r_late', 'event_time, watermark, reason, row_data') AS late_differences,
       (SELECT count(*) FROM alter_r_results) AS result_rows;
ALTER SYSTEM RESET windowing.state_memory;
SELECT pg_reload_conf();
SELECT windowing.drop_pipeline(name, true) FROM (VALUES ('alter_x'), ('alter_r')) AS p (name);
DROP PROCEDURE alter_steps;
DROP TABLE alter_q;

-- From early firing by rows to early firing every interval: a window that
-- fired early by rows takes a timer at its next row, on the first
-- multiple past the watermark, as after an early firing by the interval;
-- key 1 fires early at 200 and 300 with its rows, as key 2 does.
CREATE TABLE rows_then_interval (k int, ts bigint);
SELECT windowing.create_pipeline('rows_then_interval', 'rows_then_interval', 'ts', '{k}',
    windowing.tumbling('1 second'), 'count(*) AS n', max_out_of_orderness => '0',
    "trigger" => 'early every 3 rows', emit => 'append', start => false, retention => 'keep') > 0 AS created;
INSERT INTO rows_then_interval VALUES (1, 10), (1, 20), (1, 30), (2, 40);
SELECT windowing.process('rows_then_interval');
SELECT windowing.alter_pipeline('rows_then_interval', "trigger" => 'early every 100 milliseconds');
INSERT INTO rows_then_interval VALUES (1, 150), (2, 160), (9, 250), (1, 260), (2, 270), (9, 450), (9, 1200);
SELECT windowing.process('rows_then_interval');
SELECT k, n, fire_count, pane FROM rows_then_interval_results ORDER BY k, fire_count;
SELECT windowing.drop_pipeline('rows_then_interval', true);
DROP TABLE rows_then_interval;

-- From early firing by rows to an interval and back: a window counts its
-- rows from its last firing, whatever fired it.  Key 1 has 2 of 3 rows,
-- fires early at 100 (3 rows), and takes 2 rows more after the change
-- back, so it fires on time only (5 rows); key 2 fires early at its third
-- row after the change back, as it would have without the change.
CREATE TABLE rows_interval_rows (k int, ts bigint);
SELECT windowing.create_pipeline('rows_interval_rows', 'rows_interval_rows', 'ts', '{k}',
    windowing.tumbling('1 second'), 'count(*) AS n', max_out_of_orderness => '0',
    "trigger" => 'early every 3 rows', emit => 'append', start => false, retention => 'keep') > 0 AS created;
INSERT INTO rows_interval_rows VALUES (1, 10), (1, 20);
SELECT windowing.process('rows_interval_rows');
SELECT windowing.alter_pipeline('rows_interval_rows', "trigger" => 'early every 100 milliseconds');
INSERT INTO rows_interval_rows VALUES (1, 50), (9, 150);
SELECT windowing.process('rows_interval_rows');
SELECT windowing.alter_pipeline('rows_interval_rows', "trigger" => 'early every 3 rows');
INSERT INTO rows_interval_rows VALUES (1, 160), (1, 170), (2, 180), (2, 190), (2, 200), (9, 1200);
SELECT windowing.process('rows_interval_rows');
SELECT k, n, fire_count, pane FROM rows_interval_rows_results WHERE k < 9 ORDER BY k, fire_count;
SELECT windowing.drop_pipeline('rows_interval_rows', true);
DROP TABLE rows_interval_rows;

-- From early firing every 10 seconds of event time to every 10 seconds of
-- the clock and back: the same firings whether the state stays in memory
-- ("m") or is read back from the heap at every step ("h").  Key 1's row
-- at 10:00:21 sets an early timer at 10:00:30, which the watermark passes
-- under the clock, where a timer of event time does nothing; back on
-- event time the timer is due, and the window fires early at the next
-- step (a store kept in memory across the changes, whose number of
-- seconds is the same, did not fire it).
SET timezone = 'UTC';
SET windowing.clock = '2026-01-01 12:00:00+00';
CREATE TABLE clock_switch (k int, ts timestamptz);
SELECT windowing.create_pipeline(name, 'clock_switch', 'ts', '{k}', windowing.tumbling('1 minute'),
    'count(*) AS n', max_out_of_orderness => '0', emit => 'append',
    "trigger" => 'early every 10 seconds', start => false, retention => 'keep') > 0 AS created
FROM (VALUES ('clock_switch_m'), ('clock_switch_h')) AS p (name);
CREATE PROCEDURE clock_switch_step(moment timestamptz, clock timestamptz) LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO clock_switch VALUES (9, moment);
    COMMIT;
    PERFORM set_config('windowing.clock', clock::text, false);
    PERFORM windowing.process('clock_switch_m');
    PERFORM windowing._forget_state(id) FROM windowing.pipeline WHERE name = 'clock_switch_h';
    PERFORM windowing.process('clock_switch_h');
    COMMIT;
END $$;
INSERT INTO clock_switch VALUES (1, '2026-01-01 10:00:21+00');
CALL clock_switch_step('2026-01-01 10:00:22+00', '2026-01-01 12:00:01+00');
SELECT windowing.alter_pipeline(name, "trigger" => 'early every 10 seconds of processing time')
FROM (VALUES ('clock_switch_m'), ('clock_switch_h')) AS p (name);
CALL clock_switch_step('2026-01-01 10:00:35+00', '2026-01-01 12:00:02+00');
CALL clock_switch_step('2026-01-01 10:00:38+00', '2026-01-01 12:00:03+00');
SELECT windowing.alter_pipeline(name, "trigger" => 'early every 10 seconds')
FROM (VALUES ('clock_switch_m'), ('clock_switch_h')) AS p (name);
CALL clock_switch_step('2026-01-01 10:00:45+00', '2026-01-01 12:00:04+00');
CALL clock_switch_step('2026-01-01 10:00:52+00', '2026-01-01 12:00:05+00');
SELECT 'm' AS p, k, n, fire_count, pane FROM clock_switch_m_results WHERE k = 1
UNION ALL SELECT 'h', k, n, fire_count, pane FROM clock_switch_h_results WHERE k = 1 ORDER BY 1;
SELECT windowing.drop_pipeline(name, true) FROM (VALUES ('clock_switch_m'), ('clock_switch_h')) AS p (name);

-- From early firing every 10 seconds of the clock to every 20: a timer
-- between two multiples of the new interval moves to the next one.  Key
-- 1's rows, read at 12:01:21.1, set a timer at 12:01:30, which moves to
-- 12:01:40 (a step whose clock passes no multiple runs no timer, and
-- reads its windows by key: at 12:01:30.7 the pipeline in memory would
-- have fired a step later than the one read from the heap).
TRUNCATE clock_switch;
SELECT windowing.create_pipeline(name, 'clock_switch', 'ts', '{k}', windowing.tumbling('1 minute'),
    'count(*) AS n', max_out_of_orderness => '0', emit => 'append',
    "trigger" => 'early every 10 seconds of processing time', start => false,
    retention => 'keep') > 0 AS created
FROM (VALUES ('clock_switch_m'), ('clock_switch_h')) AS p (name);
INSERT INTO clock_switch VALUES (1, '2026-01-01 10:01:13+00'), (1, '2026-01-01 10:01:09+00');
CALL clock_switch_step('2026-01-01 10:01:10+00', '2026-01-01 12:01:21.1+00');
SELECT windowing.alter_pipeline(name, "trigger" => 'early every 20 seconds of processing time')
FROM (VALUES ('clock_switch_m'), ('clock_switch_h')) AS p (name);
CALL clock_switch_step('2026-01-01 10:01:11+00', '2026-01-01 12:01:28.7+00');
INSERT INTO clock_switch VALUES (1, '2026-01-01 10:01:14+00');
CALL clock_switch_step('2026-01-01 10:01:12+00', '2026-01-01 12:01:30.7+00');
CALL clock_switch_step('2026-01-01 10:01:13+00', '2026-01-01 12:01:36.3+00');
SELECT 'm' AS p, k, n, fire_count, pane FROM clock_switch_m_results WHERE k = 1
UNION ALL SELECT 'h', k, n, fire_count, pane FROM clock_switch_h_results WHERE k = 1 ORDER BY 1;
CALL clock_switch_step('2026-01-01 10:01:14+00', '2026-01-01 12:01:40.1+00');
SELECT 'm' AS p, k, n, fire_count, pane FROM clock_switch_m_results WHERE k = 1
UNION ALL SELECT 'h', k, n, fire_count, pane FROM clock_switch_h_results WHERE k = 1 ORDER BY 1;
SELECT windowing.drop_pipeline(name, true) FROM (VALUES ('clock_switch_m'), ('clock_switch_h')) AS p (name);
DROP PROCEDURE clock_switch_step;
DROP TABLE clock_switch;
RESET windowing.clock;
RESET timezone;
