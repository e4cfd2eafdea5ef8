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
