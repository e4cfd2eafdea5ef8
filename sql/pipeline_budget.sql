-- A step ends early once it holds windowing.step_memory beyond the state it
-- loaded, commits what it read, and the next step goes on from there: the
-- results are those of one unbounded step.
SET datestyle = ISO;
SET timezone = 'UTC';
CREATE TABLE budget (k int, ts timestamptz, v int);
SELECT windowing.create_pipeline(p, 'budget', 'ts', '{k}', windowing.tumbling('1 hour'),
    'count(*) AS n, sum(v) AS total, windowing.collect(v) AS vs', start => false, retention => 'consume')
FROM unnest(ARRAY['small_steps', 'one_step']) p;
INSERT INTO budget SELECT g % 4, '2026-01-01'::timestamptz + g * interval '100 ms', g
FROM generate_series(1, 60000) g;

SET windowing.step_memory = '64kB';
SELECT windowing.process('small_steps') < 60000 AS first_step_cut_short;
CREATE TEMP TABLE steps AS
SELECT windowing.process('small_steps') AS n FROM generate_series(1, 400);
SELECT count(*) FILTER (WHERE n > 0) > 1 AS several_more_steps,
       (SELECT rows_consumed FROM windowing.pipeline_stats WHERE name = 'small_steps') AS consumed
FROM steps;
RESET windowing.step_memory;
SELECT windowing.process('one_step');
SELECT windowing.flush('small_steps'), windowing.flush('one_step');
SELECT count(*) AS windows, sum(n) AS n, sum(total) AS total,
       sum(cardinality(vs)) AS collected FROM small_steps_results;
SELECT count(*) AS differences FROM (
  (SELECT k, window_start, n, total, vs FROM small_steps_results
   EXCEPT SELECT k, window_start, n, total, vs FROM one_step_results)
  UNION ALL
  (SELECT k, window_start, n, total, vs FROM one_step_results
   EXCEPT SELECT k, window_start, n, total, vs FROM small_steps_results)) d;

-- The setting's bounds.
SET windowing.step_memory = -2;
SHOW windowing.step_memory;
SELECT windowing.drop_pipeline(p, drop_tables => true) FROM unnest(ARRAY['small_steps', 'one_step']) p;
DROP TABLE budget;
