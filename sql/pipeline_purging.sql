-- Purging triggers (Flink's PurgingTrigger): a window's contents go each
-- time it fires, so each firing has the rows since the one before, and a
-- firing that would find none gives nothing.  Hand-worked, on bigint time
-- (milliseconds), tumbling 10 ms windows, count + sum.
CREATE TABLE pg_ev (k int, ts bigint, v int);
-- (create_pipeline prints ids that depend on the tests before this one)
CREATE FUNCTION pg_temp.pipeline(name text, trig text, emit text DEFAULT 'append',
                                 assigner windowing.assigner DEFAULT windowing.tumbling('10 milliseconds'),
                                 lateness interval DEFAULT '5 milliseconds') RETURNS void
LANGUAGE sql AS $$
    SELECT NULL::void FROM windowing.create_pipeline(name, 'pg_ev', 'ts', '{k}', assigner,
        'count(*) AS n, sum(v) AS s', allowed_lateness => lateness, emit => emit,
        trigger => trig, start => false, retention => 'keep')
$$;
\i sql/include/drain.sql

-- Rows, in arrival order:
--   1 (v 1), 2 (v 2): [0, 10) has 2 rows, fires early with them, and purges;
--   3 (v 3): [0, 10) has 1 row since;
--   12 (v 10): the watermark (11) passes [0, 10), which fires on time with
--     row 3 alone;
--   8 (v 100): late, within the lateness (5 ms): [0, 10) fires with it alone;
--   16 (v 1): the watermark (15) ends [0, 10)'s life; [10, 20) has 2 rows
--     (12 and 16) and fires early with them.
-- flush(): [10, 20) has no row since it fired: no firing on time; its end
-- of life has the rows since its last firing, none.
INSERT INTO pg_ev VALUES (1, 1, 1), (1, 2, 2), (1, 3, 3), (1, 12, 10), (1, 8, 100), (1, 16, 1);

SELECT pg_temp.pipeline('pa', 'purging early every 2 rows');
SELECT windowing.process('pa');
SELECT windowing.flush('pa');
SELECT window_start, n, s, fire_count, is_final, pane FROM pa_results
ORDER BY window_start, fire_count, is_final;

-- The same in steps of one row, each reading its state back from the heap.
SELECT pg_temp.pipeline('pa_steps', 'purging early every 2 rows');
CALL pg_temp.drain('pa_steps', 1, 1);
SELECT count(*) AS differences FROM (
  (SELECT window_start, n, s, fire_count, is_final, pane FROM pa_results
   EXCEPT ALL SELECT window_start, n, s, fire_count, is_final, pane FROM pa_steps_results)
  UNION ALL
  (SELECT window_start, n, s, fire_count, is_final, pane FROM pa_steps_results
   EXCEPT ALL SELECT window_start, n, s, fire_count, is_final, pane FROM pa_results)) d;

-- Upsert keeps each window's latest pane; fire_count says which it is.
SELECT pg_temp.pipeline('pu', 'purging early every 2 rows', emit => 'upsert');
SELECT windowing.process('pu');
SELECT windowing.flush('pu');
SELECT window_start, n, s, fire_count, is_final, pane FROM pu_results ORDER BY window_start;

-- Purging at the watermark alone: the firing on time has the window's
-- rows, and each late firing only the rows since the firing before.
SELECT pg_temp.pipeline('pe', 'purging event time');
SELECT windowing.process('pe');
SELECT windowing.flush('pe');
SELECT window_start, n, s, fire_count, is_final FROM pe_results
ORDER BY window_start, fire_count, is_final;

-- Every 5 ms of event time: row 12's watermark (11) passes [0, 10)'s timer
-- at 5 and its end together, so it fires on time only, with rows 1 to 3,
-- then late with row 8; [10, 20)'s timer at 15, reached by row 16's
-- watermark, fires rows 12 and 16, and flush() finds none since.
SELECT pg_temp.pipeline('pt', 'purging early every 5 milliseconds');
SELECT windowing.process('pt');
SELECT windowing.flush('pt');
SELECT window_start, n, s, fire_count, is_final, pane FROM pt_results
ORDER BY window_start, fire_count, is_final;

-- Hopping windows purge each window alone (their state is kept per
-- window, not in slices shared by windows): each fires on time with its
-- rows, and [0, 10) late with the late row only ([5, 15) had not fired
-- when it came).
SELECT pg_temp.pipeline('ph', 'purging event time',
                        assigner => windowing.hopping('10 milliseconds', '5 milliseconds'));
SELECT windowing.process('ph');
SELECT windowing.flush('ph');
SELECT window_start, n, s, fire_count FROM ph_results WHERE NOT is_final
ORDER BY window_start, fire_count;

-- Global windows (Flink's GlobalWindows): one window per key for all of
-- time, fired by its trigger alone.  Every 3 rows of a key, purging: key 0
-- has rows 2, 4, 6 (fired together), then 8 and 10, fired at flush() (the
-- watermark reaches a global window's end then only); key 1 likewise.
CREATE TABLE pg_glob (k int, ts bigint, v int);
INSERT INTO pg_glob SELECT i % 2, i, i FROM generate_series(1, 10) i;
SELECT NULL::void FROM windowing.create_pipeline('pgl', 'pg_glob', 'ts', '{k}', windowing.global(),
    'count(*) AS n, sum(v) AS s', emit => 'append', trigger => 'purging early every 3 rows',
    retention => 'keep');
SELECT windowing.describe(assigner) FROM windowing.pipeline WHERE name = 'pgl';
SELECT windowing.process('pgl', 4);
SELECT windowing._forget_state(id) FROM windowing.pipeline WHERE name = 'pgl' \gset
SELECT windowing.process('pgl');
SELECT key, results FROM windowing.open_windows('pgl') ORDER BY key::text;
SELECT windowing.flush('pgl');
SELECT k, window_start, window_end, n, s, fire_count, pane, is_final FROM pgl_results
ORDER BY k, fire_count;
-- a global window needs a trigger that fires it
SELECT NULL::void FROM windowing.create_pipeline('bad', 'pg_glob', 'ts', '{k}', windowing.global(),
    retention => 'keep');

-- What cannot purge, and what cannot change.
SELECT pg_temp.pipeline('bad', 'purging event time', assigner => windowing.session('5 milliseconds'));
SELECT pg_temp.pipeline('bad', 'purging event time', assigner => windowing.counting(2));
SELECT pg_temp.pipeline('bad', 'purging sometimes');
SELECT windowing.alter_pipeline('pa', "trigger" => 'early every 3 rows');
SELECT windowing.alter_pipeline('pe', "trigger" => 'event time');
SELECT windowing.alter_pipeline('pa', "trigger" => 'purging early every 3 rows');
SELECT name, "trigger" FROM windowing.pipelines WHERE name IN ('pa', 'pe', 'pt') ORDER BY name;
