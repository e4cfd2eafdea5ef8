-- Derived result columns: expressions over a window's aggregates and its
-- bounds, computed each time the window fires.
CREATE TABLE dv (k int, ts bigint, v int, t text);
-- (create_pipeline prints ids that depend on the tests before this one)
CREATE FUNCTION pg_temp.pipeline(name text, assigner windowing.assigner, aggs text,
                                 lateness interval DEFAULT '0', emit text DEFAULT 'upsert',
                                 trig text DEFAULT NULL) RETURNS void
LANGUAGE sql AS $$
    SELECT NULL::void FROM windowing.create_pipeline(name, 'dv', 'ts', '{k}', assigner, aggs,
        allowed_lateness => lateness, emit => emit, trigger => trig, start => false,
        retention => 'keep')
$$;

-- The result table gets a column per output, of the expression's type.
SELECT pg_temp.pipeline('dt', windowing.tumbling('10 milliseconds'),
    'count(*) AS n, sum(v)::numeric / count(v) AS mean, max(v) - min(v) AS spread, '
    'window_end - window_start AS len, window_time AS last_ms, '
    'max(t) || ''/'' || count(*) AS label, sum(v) * 2 + count(*) AS mixed');
SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'dt_results'::regclass AND attnum > 0 ORDER BY attnum;

INSERT INTO dv VALUES (1, 1, 5, 'a'), (1, 3, 9, 'c'), (2, 4, NULL, 'b'), (1, 12, 2, NULL),
                      (1, 25, 0, 'z');
SELECT windowing.process('dt');
-- what the open window would give now, bounds included
SELECT key, window_start, window_end, results FROM windowing.open_windows('dt');
SELECT k, window_start, n, mean, spread, len, last_ms, label, mixed
FROM dt_results ORDER BY k, window_start;

-- One aggregate in several columns; the state is read back from the heap
-- between steps.
SELECT pg_temp.pipeline('dd', windowing.tumbling('10 milliseconds'),
    'count(*) AS n, sum(v) / count(*) AS q, count(*) * 10 AS n10, sum(v) - count(*) AS d',
    lateness => '100 milliseconds');
SELECT windowing.process('dd', 2);
SELECT windowing._forget_state(id) FROM windowing.pipeline WHERE name = 'dd' \gset
SELECT windowing.process('dd');
SELECT k, window_start, n, q, n10, d, fire_count, is_final FROM dd_results ORDER BY k, window_start;
-- a late row fires [0, 10) of key 1 again: every derived column follows
INSERT INTO dv VALUES (1, 7, 100, 'x');
SELECT windowing._forget_state(id) FROM windowing.pipeline WHERE name = 'dd' \gset
SELECT windowing.process('dd');
SELECT k, window_start, n, q, n10, d, fire_count, is_final FROM dd_results ORDER BY k, window_start;
SELECT windowing.flush('dd');
SELECT k, window_start, n, q, n10, d, fire_count, is_final FROM dd_results ORDER BY k, window_start;

-- Append mode with allowed lateness: the row that ends a window's life
-- repeats its last result, derived columns included.
SELECT pg_temp.pipeline('da', windowing.tumbling('10 milliseconds'),
    'sum(v) AS s, sum(v) + window_start AS shifted', lateness => '5 milliseconds', emit => 'append');
SELECT windowing.process('da');
SELECT windowing.flush('da');
SELECT k, window_start, s, shifted, fire_count, is_final FROM da_results
ORDER BY k, window_start, fire_count, is_final;

-- Early firings: each pane computes its derived columns from the results
-- so far.
SELECT pg_temp.pipeline('de', windowing.tumbling('10 milliseconds'),
    'count(*) AS n, window_end - max(ts) AS left_ms', emit => 'append', trig => 'early every 2 rows');
SELECT windowing.process('de');
SELECT windowing.flush('de');
SELECT k, window_start, n, left_ms, fire_count, pane FROM de_results ORDER BY k, window_start, fire_count;

-- Sessions: the bounds are the merged session's.
SELECT pg_temp.pipeline('ds', windowing.session('5 milliseconds'),
    'count(*) AS n, window_end - window_start AS len, (window_end - window_start) / count(*) AS per_row');
SELECT windowing.process('ds', 1);
SELECT windowing._forget_state(id) FROM windowing.pipeline WHERE name = 'ds' \gset
SELECT windowing.process('ds');
SELECT windowing.flush('ds');
SELECT k, window_start, window_end, n, len, per_row FROM ds_results ORDER BY k, window_start;

-- Count windows: the bounds are row numbers.
SELECT pg_temp.pipeline('dc', windowing.counting(2),
    'sum(v) AS s, window_end - window_start AS rows_in');
SELECT windowing.process('dc');
SELECT windowing.flush('dc');
SELECT k, window_start, window_end, s, rows_in FROM dc_results ORDER BY k, window_start;

-- timestamptz time: window_end - window_start is an interval.
CREATE TABLE dz (ts timestamptz, v int);
SELECT NULL::void FROM windowing.create_pipeline('dz', 'dz', 'ts', '{}', windowing.tumbling('1 hour'),
    'sum(v) AS s, window_end - window_start AS len, date_part(''hour'', window_start AT TIME ZONE ''UTC'') AS hour',
    retention => 'keep');
INSERT INTO dz VALUES ('2026-01-01 10:20:00+00', 1), ('2026-01-01 10:40:00+00', 2);
SELECT windowing.process('dz');
SELECT windowing.flush('dz');
SELECT window_start, s, len, hour FROM dz_results;

-- What cannot be a result column, and why.
SELECT pg_temp.pipeline('bad', windowing.tumbling('10 milliseconds'), 'sum(v) + 1');
SELECT pg_temp.pipeline('bad', windowing.tumbling('10 milliseconds'), 'v + 1 AS w');
SELECT pg_temp.pipeline('bad', windowing.tumbling('10 milliseconds'), 'count(*) AS n, t AS w');
SELECT pg_temp.pipeline('bad', windowing.tumbling('10 milliseconds'), 'count(dv) AS n, dv AS w');
SELECT pg_temp.pipeline('bad', windowing.tumbling('10 milliseconds'), 'sum(window_start) AS w');
SELECT pg_temp.pipeline('bad', windowing.tumbling('10 milliseconds'), 'sum(v) FILTER (WHERE window_end > 5) AS w');
SELECT pg_temp.pipeline('bad', windowing.tumbling('10 milliseconds'), 'sum(v) OVER () AS w');
SELECT pg_temp.pipeline('bad', windowing.tumbling('10 milliseconds'), 'generate_series(1, count(*)) AS w');
SELECT pg_temp.pipeline('bad', windowing.tumbling('10 milliseconds'), '(SELECT 1) + count(*) AS w');
SELECT pg_temp.pipeline('bad', windowing.tumbling('10 milliseconds'), 'count(*) AS n, sum(v) / count(*) AS n');
SELECT pg_temp.pipeline('bad', windowing.tumbling('10 milliseconds'), 'count(*) AS window_end');
-- a source column named like a bound is read as the column when qualified
CREATE TABLE dw (ts bigint, window_end int);
SELECT NULL::void FROM windowing.create_pipeline('bad', 'dw', 'ts', '{}', windowing.tumbling('10 milliseconds'),
    'count(*) - window_end AS w', retention => 'keep');
SELECT NULL::void FROM windowing.create_pipeline('dw', 'dw', 'ts', '{}', windowing.tumbling('10 milliseconds'),
    'max(dw.window_end) AS m', retention => 'keep');
SELECT name FROM windowing.pipelines WHERE name LIKE 'bad%';
