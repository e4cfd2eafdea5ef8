-- A step holds the rows it reads a few at a time before the operator takes
-- them, so that their keys' state is brought towards the processor's cache
-- first: every value a row has passed by reference (a text key, numeric
-- and text inputs computed from the row, an interval gap) is the row's own
-- until the operator took it.  Each pipeline below reads 100 rows over 7
-- text keys in one step and its twin in steps of 1 to 17 rows; both give
-- what SQL gives over the same rows.  Failing rows in the middle of a
-- batch go to the late table, the rows around them to their windows.
SET datestyle = ISO;
SET timezone = 'UTC';
\set SHOW_CONTEXT never
\i sql/include/differences.sql

CREATE TABLE batched (i int, k text, ts timestamptz, v numeric, note text, gap interval);
INSERT INTO batched
SELECT i, 'key-' || (i % 7), timestamptz '2026-01-01' + i * interval '1 second', i / 3.0,
       repeat('x', i % 5) || i, (1 + i % 3) * interval '4 seconds'
FROM generate_series(1, 100) i;

CREATE FUNCTION create_twins(name text, assigner windowing.assigner, aggregates text,
                             on_error text DEFAULT 'stop') RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    twin text;
BEGIN
    FOREACH twin IN ARRAY ARRAY[name || '_one', name || '_small'] LOOP
        PERFORM windowing.create_pipeline(twin, 'batched', 'ts', '{k}', assigner, aggregates,
                                          start => false, retention => 'keep',
                                          on_error => on_error);
    END LOOP;
END $$;
-- the twin's steps: 1, 2, ... 17 rows, then again from 1
CREATE PROCEDURE small_steps(name text) LANGUAGE plpgsql AS $$
DECLARE
    m int := 0;
BEGIN
    LOOP
        m := m % 17 + 1;
        EXIT WHEN windowing.process(name, max_rows => m) = 0;
        COMMIT;
    END LOOP;
    PERFORM windowing.flush(name);
END $$;
CREATE PROCEDURE run_twins(name text) LANGUAGE plpgsql AS $$
BEGIN
    PERFORM windowing.process(name || '_one');
    PERFORM windowing.flush(name || '_one');
    COMMIT;
    CALL small_steps(name || '_small');
END $$;

SELECT create_twins('tumbled', windowing.tumbling('20 seconds'),
                    'count(*) AS n, sum(v * 2) AS s, max(note || k) AS m');
CALL run_twins('tumbled');
CREATE VIEW tumbled_sql AS
SELECT k, date_bin('20 seconds', ts, timestamptz '2026-01-01') AS window_start,
       count(*) AS n, sum(v * 2) AS s, max(note || k) AS m
FROM batched GROUP BY 1, 2;
SELECT count(*) AS windows FROM tumbled_sql;
SELECT pg_temp.differences('tumbled_one_results', 'tumbled_sql', 'k, window_start, n, s, m') AS one_step,
       pg_temp.differences('tumbled_small_results', 'tumbled_sql', 'k, window_start, n, s, m') AS small_steps;

-- sessions whose gap is each row's own (an interval, passed by reference)
SELECT create_twins('gapped', windowing.session_dynamic('gap'), 'count(*) AS n, sum(v) AS s');
CALL run_twins('gapped');
CREATE VIEW gapped_sql AS
WITH marked AS (
    SELECT k, ts, gap, v,
           max(ts + gap) OVER (PARTITION BY k ORDER BY ts
                               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach
    FROM batched),
numbered AS (
    SELECT *, count(*) FILTER (WHERE reach IS NULL OR ts >= reach)
                  OVER (PARTITION BY k ORDER BY ts) AS session
    FROM marked)
SELECT k, min(ts) AS window_start, max(ts + gap) AS window_end, count(*) AS n, sum(v) AS s
FROM numbered GROUP BY k, session;
SELECT count(*) AS sessions FROM gapped_sql;
SELECT pg_temp.differences('gapped_one_results', 'gapped_sql', 'k, window_start, window_end, n, s') AS one_step,
       pg_temp.differences('gapped_small_results', 'gapped_sql', 'k, window_start, window_end, n, s') AS small_steps;

-- rows 13, 26, ... fail their input (division by zero), each in the middle
-- of a batch of the step that reads every row; row 50 overflows the
-- float8 sum's transition, which row 43 (same key and window) brought to
-- 1e308
UPDATE batched SET v = 1e308 WHERE i IN (43, 50);
SELECT create_twins('failing', windowing.tumbling('20 seconds'),
                    'count(*) AS n, sum(100 / (i % 13)) AS d, sum(v::float8) AS f, max(note) AS m',
                    on_error => 'route');
CALL run_twins('failing');
SELECT row_data->>'i' AS i, reason FROM failing_one_late ORDER BY (row_data->>'i')::int;
CREATE VIEW failing_sql AS
SELECT k, date_bin('20 seconds', ts, timestamptz '2026-01-01') AS window_start,
       count(*) AS n, sum(100 / (i % 13)) AS d, sum(v::float8) AS f, max(note) AS m
FROM batched WHERE i % 13 <> 0 AND i <> 50 GROUP BY 1, 2;
SELECT pg_temp.differences('failing_one_results', 'failing_sql', 'k, window_start, n, d, f, m') AS one_step,
       pg_temp.differences('failing_small_results', 'failing_sql', 'k, window_start, n, d, f, m') AS small_steps;
SELECT (SELECT array_agg((row_data->>'i')::int ORDER BY (row_data->>'i')::int) FROM failing_one_late)
     = (SELECT array_agg((row_data->>'i')::int ORDER BY (row_data->>'i')::int) FROM failing_small_late)
    AS same_late_rows;
