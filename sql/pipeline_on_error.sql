-- on_error: a row whose aggregate input or transition fails stops the step
-- ('stop', the default: the step fails whole, consuming nothing), or goes to
-- the late table with its error while the step goes on ('route').
SET datestyle = ISO;
\set SHOW_CONTEXT never
SET timezone = 'UTC';

CREATE TABLE notes (id int, ts bigint, note text);
-- 'route' needs a late table; on_error is 'stop' or 'route'
SELECT windowing.create_pipeline('nolate', 'notes', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    late_table => '', on_error => 'route', retention => 'keep');
SELECT windowing.create_pipeline('skip', 'notes', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    on_error => 'skip', retention => 'keep');
SELECT windowing.create_pipeline('routed', 'notes', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    aggregates => 'count(*) AS n, sum(note::jsonb::int) AS total', on_error => 'route', start => false,
    retention => 'keep');
SELECT windowing.create_pipeline('stopped', 'notes', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    aggregates => 'count(*) AS n, sum(note::jsonb::int) AS total', start => false);
SELECT name, on_error FROM windowing.pipeline ORDER BY name;
INSERT INTO notes VALUES (1, 1, '1'), (2, 2, 'n/a'), (3, 3, '3'), (4, 12, '4'), (5, 13, '"x"'), (6, 25, '6');

-- 'route': the failing rows go to the late table, the others to their windows
SELECT windowing.process('routed');
SELECT window_start, window_end, n, total FROM routed_results ORDER BY 1;
SELECT row_data->>'id' AS id, event_time, watermark, reason, missed_windows, error
FROM routed_late ORDER BY 1;
SELECT name, rows_consumed, windows_fired, late_routed, late_dropped, steps, last_error
FROM windowing.pipeline_stats WHERE name = 'routed';
-- later rows go on as ever, a failing one among them too
INSERT INTO notes VALUES (7, 26, '7'), (8, 27, '[1]'), (9, 31, '9');
SELECT windowing.process('routed');
SELECT window_start, window_end, n, total FROM routed_results ORDER BY 1;
SELECT row_data->>'id' AS id, reason FROM routed_late ORDER BY 1;
SELECT name, rows_consumed, windows_fired, late_routed, steps FROM windowing.pipeline_stats
WHERE name = 'routed';

-- 'stop': the first failing row fails the step, which consumes nothing
SELECT windowing.process('stopped');
SELECT name, rows_consumed, windows_fired, late_routed, steps FROM windowing.pipeline_stats
WHERE name = 'stopped';
SELECT count(*) FROM stopped_late;

-- errors of aggregate transitions (float8 addition overflows) and of inputs
-- (division by zero); count(*) takes each row before sum(f) fails on it,
-- and the rerun leaves the failing row out of both
CREATE TABLE floats (ts bigint, f float8, i int);
SELECT windowing.create_pipeline('overflow', 'floats', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    aggregates => 'count(*) AS c, sum(f) AS sf', on_error => 'route', start => false,
    retention => 'consume');
SELECT windowing.create_pipeline('divide', 'floats', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    aggregates => 'count(*) AS c, sum(100 / i) AS s', on_error => 'route', start => false);
SELECT windowing.create_pipeline('divide_stop', 'floats', 'ts', assigner => windowing.tumbling('10 milliseconds'),
    aggregates => 'count(*) AS c, sum(100 / i) AS s', start => false);
INSERT INTO floats VALUES (1, 1, 1), (2, 1e308, 0), (3, 1e308, 2), (4, 1, 0), (15, 1, 4);

-- in an explicit transaction: the routed rows commit with the step
BEGIN;
SELECT windowing.process('overflow');
SELECT row_data->>'ts' AS ts, reason FROM overflow_late ORDER BY 1;
COMMIT;
SELECT window_start, c, sf FROM overflow_results ORDER BY 1;
SELECT row_data->>'ts' AS ts, reason, error->>'sqlstate' AS sqlstate FROM overflow_late ORDER BY 1;

-- in PL/pgSQL blocks that catch errors: 'route' raises none and its step
-- commits; 'stop' raises its error there, and its step leaves nothing
DO $$
BEGIN
    PERFORM windowing.process('divide');
EXCEPTION WHEN division_by_zero THEN
    RAISE NOTICE 'caught: %', SQLERRM;
END
$$;
DO $$
BEGIN
    PERFORM windowing.process('divide_stop');
EXCEPTION WHEN division_by_zero THEN
    RAISE NOTICE 'caught: %', SQLERRM;
END
$$;
SELECT row_data->>'ts' AS ts, reason FROM divide_late ORDER BY 1;
SELECT name, rows_consumed, windows_fired, late_routed, steps FROM windowing.pipeline_stats
WHERE name IN ('overflow', 'divide', 'divide_stop') ORDER BY name;
SELECT windowing.flush('divide');
SELECT window_start, c, s FROM divide_results ORDER BY 1;

SELECT windowing.drop_pipeline(name, drop_tables => true)
FROM windowing.pipeline ORDER BY name;
DROP TABLE notes, floats;
