-- What a user reads in psql: the comments of the extension's objects, the
-- descriptions of its settings, and pipelines' assigners written as the
-- calls that make them.

-- Every function, aggregate, table, view and type users call or read has
-- a comment.  Internal objects are named with a leading underscore (array
-- types too); aggregates' support functions and tables' and views' row
-- types are parts of other objects.
SELECT kind, name FROM (
  SELECT 'function' AS kind, p.oid::regprocedure::text AS name, p.proname AS own_name,
         obj_description(p.oid, 'pg_proc') AS description
  FROM pg_proc p
  WHERE p.pronamespace = 'windowing'::regnamespace
    AND NOT EXISTS (SELECT FROM pg_aggregate a
                    WHERE p.oid IN (a.aggtransfn, a.aggfinalfn, a.aggcombinefn,
                                    a.aggserialfn, a.aggdeserialfn))
  UNION ALL
  SELECT 'relation', c.oid::regclass::text, c.relname, obj_description(c.oid, 'pg_class')
  FROM pg_class c
  WHERE c.relnamespace = 'windowing'::regnamespace AND c.relkind IN ('r', 'v')
  UNION ALL
  SELECT 'type', t.oid::regtype::text, t.typname, obj_description(t.oid, 'pg_type')
  FROM pg_type t LEFT JOIN pg_class c ON c.oid = t.typrelid
  WHERE t.typnamespace = 'windowing'::regnamespace AND coalesce(c.relkind, 'c') = 'c'
) o
WHERE own_name NOT LIKE '\_%' AND description IS NULL
ORDER BY 1, 2;

-- what \df+, \da, \dv+, \dt+ and \dT show
SELECT p.oid::regprocedure AS function, obj_description(p.oid, 'pg_proc') AS description
FROM pg_proc p
WHERE p.pronamespace = 'windowing'::regnamespace AND obj_description(p.oid, 'pg_proc') IS NOT NULL
ORDER BY p.oid::regprocedure::text;
SELECT c.oid::regclass AS relation, c.relkind, obj_description(c.oid, 'pg_class') AS description
FROM pg_class c
WHERE c.relnamespace = 'windowing'::regnamespace AND obj_description(c.oid, 'pg_class') IS NOT NULL
ORDER BY c.oid::regclass::text;
SELECT t.oid::regtype AS type, obj_description(t.oid, 'pg_type') AS description
FROM pg_type t
WHERE t.typnamespace = 'windowing'::regnamespace AND obj_description(t.oid, 'pg_type') IS NOT NULL
ORDER BY t.oid::regtype::text;

-- The settings (which exist once the library is loaded; the tests preload
-- it) say what they do in pg_settings and SHOW ALL.
SELECT name, short_desc FROM pg_settings WHERE name LIKE 'windowing.%' ORDER BY name;
SELECT name, extra_desc FROM pg_settings
WHERE name LIKE 'windowing.%' AND extra_desc IS NOT NULL ORDER BY name;

-- describe(): an assigner as the call that makes it, every optional
-- argument shown only when it differs from its default, intervals as the
-- session writes them
SET intervalstyle = postgres;
CREATE TEMP TABLE assigners (a windowing.assigner);
INSERT INTO assigners VALUES
    (windowing.tumbling('5 minutes')),
    (windowing.tumbling('1 day', '6 hours', tz => 'Europe/Paris')),
    (windowing.tumbling('7 days', '-3 days')),
    (windowing.hopping('1 hour', '1 second')),
    (windowing.hopping('1 hour', '1 second', "offset" => '15 minutes', tz => 'Europe/Paris')),
    (windowing.cumulating('1 day', '1 month', tz => 'Europe/Berlin')),
    (windowing.cumulating('10 minutes', '1 hour', '5 minutes')),
    (windowing.session('10 minutes')),
    (windowing.session_dynamic('gap')),
    (windowing.session_dynamic('Gap Time')),
    (windowing.counting(100)),
    (windowing.counting(100, 100)),
    (windowing.counting(100, slide => 10)),
    -- quotes in a zone or column name
    (windowing.tumbling('1 day', tz => 'it''s')),
    (windowing.session_dynamic('it''s'));
SELECT a AS assigner, windowing.describe(a) AS call FROM assigners;
-- the call makes the same assigner again
CREATE FUNCTION pg_temp.remake(a windowing.assigner) RETURNS windowing.assigner
LANGUAGE plpgsql AS $$
DECLARE
    r windowing.assigner;
BEGIN
    EXECUTE 'SELECT (windowing.' || windowing.describe(a) || ').*' INTO r;
    RETURN r;
END $$;
SELECT count(*) AS assigners, count(*) FILTER (WHERE pg_temp.remake(a) IS NOT DISTINCT FROM a) AS remade
FROM assigners;
SET intervalstyle = postgres_verbose;
SELECT windowing.describe(windowing.hopping('1 hour', '1 second', "offset" => '15 minutes'));
SET intervalstyle = postgres;
SELECT windowing.describe(NULL);

-- windowing.pipelines shows it after the columns it had
CREATE TABLE catalog_events (k int, ts timestamptz, gap interval);
SELECT windowing.create_pipeline(name, 'catalog_events', 'ts', '{k}', a, start => false,
                                 retention => 'keep')
FROM (VALUES ('catalog_tumbling', windowing.tumbling('5 minutes')),
             ('catalog_hopping', windowing.hopping('1 hour', '10 minutes', tz => 'Europe/Paris')),
             ('catalog_cumulating', windowing.cumulating('1 day', '1 month', tz => 'Europe/Berlin')),
             ('catalog_session', windowing.session('10 minutes')),
             ('catalog_dynamic', windowing.session_dynamic('gap')),
             ('catalog_counting', windowing.counting(100, slide => 10))) v(name, a);
SELECT name, assigner, assigner_text FROM windowing.pipelines ORDER BY name;
SELECT attnum, attname FROM pg_attribute
WHERE attrelid = 'windowing.pipelines'::regclass AND attnum > 0 ORDER BY attnum;
SELECT windowing.drop_pipeline(name, drop_tables => true)
FROM windowing.pipelines WHERE name LIKE 'catalog\_%';
DROP TABLE catalog_events;
