-- The oldest version installs and walks the upgrade path to the newest.
DROP EXTENSION windowing;
CREATE EXTENSION windowing VERSION '0.1';
SELECT extversion FROM pg_extension WHERE extname = 'windowing';
SELECT windowing.tumble_start(1640697324792, 5);
SELECT to_regproc('windowing.create_pipeline') IS NULL AS no_pipelines_yet;
ALTER EXTENSION windowing UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'windowing';
SELECT to_regproc('windowing.create_pipeline') IS NOT NULL AS pipelines;
-- A fresh install of the default version gives the same objects.
CREATE TEMP TABLE updated AS
  SELECT pg_describe_object(classid, objid, 0) AS o FROM pg_depend
  WHERE refclassid = 'pg_extension'::regclass
    AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'windowing');
DROP EXTENSION windowing;
CREATE EXTENSION windowing;
SELECT count(*) AS differences FROM (
  (SELECT o FROM updated EXCEPT
   SELECT pg_describe_object(classid, objid, 0) FROM pg_depend
   WHERE refclassid = 'pg_extension'::regclass
     AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'windowing'))
  UNION ALL
  (SELECT pg_describe_object(classid, objid, 0) FROM pg_depend
   WHERE refclassid = 'pg_extension'::regclass
     AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'windowing')
   EXCEPT SELECT o FROM updated)) d;

-- A library newer than the database's extension (ALTER EXTENSION UPDATE
-- not run yet) refuses every step with the reason, until the update.
DROP EXTENSION windowing;
CREATE EXTENSION windowing VERSION '0.4';
\set SHOW_CONTEXT never
CREATE TABLE upgrade_events (k int, ts bigint);
SELECT windowing.create_pipeline('upgraded', 'upgrade_events', 'ts', '{k}',
    windowing.tumbling('10 milliseconds'), start => false);
-- state per window before 0.5, from slices since: it keeps its state per window
SELECT windowing.create_pipeline('upgraded_cumulate', 'upgrade_events', 'ts', '{k}',
    windowing.cumulating('5 milliseconds', '10 milliseconds'), start => false);
INSERT INTO upgrade_events VALUES (1, 1), (1, 2), (2, 15);
SELECT windowing.process('upgraded');
SELECT windowing.advance_watermark('upgraded', 5::bigint);
SELECT windowing.flush('upgraded');
SELECT * FROM windowing.open_windows('upgraded');
SELECT windowing.pause_pipeline('upgraded');
SELECT rows_consumed, last_error FROM windowing.pipeline_stats;
ALTER EXTENSION windowing UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'windowing';
SELECT name, sliced FROM windowing.pipeline ORDER BY name;
SELECT windowing.process('upgraded');
SELECT windowing.flush('upgraded');
SELECT k, window_start, count FROM upgraded_results ORDER BY 1, 2;
SELECT windowing.drop_pipeline(p, drop_tables => true) FROM unnest(ARRAY['upgraded', 'upgraded_cumulate']) p;
DROP TABLE upgrade_events;
-- the tests that follow start from a fresh install (pipeline ids from 1)
DROP EXTENSION windowing;
CREATE EXTENSION windowing;
