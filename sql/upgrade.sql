-- The oldest version installs and walks the upgrade path to the newest.
DROP EXTENSION windowing;
CREATE EXTENSION windowing VERSION '0.1';
SELECT extversion FROM pg_extension WHERE extname = 'windowing';
SELECT windowing.tumble_start(1640697324792, 5);
SELECT to_regproc('windowing.create_pipeline') IS NULL AS no_pipelines_yet;
ALTER EXTENSION windowing UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'windowing';
SELECT to_regproc('windowing.create_pipeline') IS NOT NULL AS pipelines;
-- A fresh install of the default version (windowing--0.23.sql, one script)
-- gives the schema that the upgrade chain gave: the same objects, and of
-- each the same definition and grants.
CREATE FUNCTION pg_temp.windowing_schema() RETURNS TABLE (what text, name text, detail text)
LANGUAGE sql AS $$
  WITH ext AS (SELECT oid FROM pg_extension WHERE extname = 'windowing'),
       nsp AS (SELECT oid FROM pg_namespace WHERE nspname = 'windowing'),
       rel AS (SELECT c.* FROM pg_class c WHERE c.relnamespace = (SELECT oid FROM nsp))
  -- every member of the extension
  SELECT 'member', pg_describe_object(d.classid, d.objid, d.objsubid), d.deptype::text
  FROM pg_depend d WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = (SELECT oid FROM ext)
  UNION ALL
  SELECT 'schema', n.nspname, n.nspacl::text FROM pg_namespace n WHERE n.oid = (SELECT oid FROM nsp)
  UNION ALL
  -- tables, views, sequences, indexes and composite types: their kind,
  -- grants, storage options and row security
  SELECT 'relation', c.oid::regclass::text,
         concat_ws(' ', c.relkind, c.relpersistence, c.relacl, c.reloptions,
                   c.relrowsecurity, c.relforcerowsecurity)
  FROM rel c
  UNION ALL
  -- their columns, in order: type, not null, default, storage, grants
  SELECT 'column', a.attrelid::regclass || '.' || a.attname,
         concat_ws(' ', a.attnum, format_type(a.atttypid, a.atttypmod),
                   CASE WHEN a.attnotnull THEN 'NOT NULL' END,
                   'DEFAULT ' || pg_get_expr(ad.adbin, ad.adrelid),
                   a.attstorage, a.attcollation::regcollation, a.attacl)
  FROM pg_attribute a JOIN rel c ON c.oid = a.attrelid
  LEFT JOIN pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum
  WHERE a.attnum > 0 AND NOT a.attisdropped
  UNION ALL
  SELECT 'sequence', s.seqrelid::regclass::text,
         concat_ws(' ', s.seqtypid::regtype, s.seqstart, s.seqincrement, s.seqmin, s.seqmax,
                   s.seqcache, s.seqcycle)
  FROM pg_sequence s JOIN rel c ON c.oid = s.seqrelid
  UNION ALL
  -- functions: the whole definition (arguments, defaults, language,
  -- volatility, SECURITY DEFINER, settings, body) and who may execute them
  SELECT 'function', p.oid::regprocedure::text, concat_ws(' ', pg_get_functiondef(p.oid), p.proacl)
  FROM pg_proc p WHERE p.pronamespace = (SELECT oid FROM nsp) AND p.prokind <> 'a'
  UNION ALL
  SELECT 'aggregate', p.oid::regprocedure::text,
         concat_ws(' ', g.aggkind, g.aggtransfn, g.aggfinalfn, g.aggfinalextra, g.aggcombinefn,
                   g.aggserialfn, g.aggdeserialfn, g.aggtranstype::regtype, g.agginitval,
                   p.proparallel, p.proacl)
  FROM pg_proc p JOIN pg_aggregate g ON g.aggfnoid = p.oid
  WHERE p.pronamespace = (SELECT oid FROM nsp)
  UNION ALL
  SELECT 'view', c.oid::regclass::text, pg_get_viewdef(c.oid) FROM rel c WHERE c.relkind = 'v'
  UNION ALL
  SELECT 'policy', pol.polrelid::regclass || ' ' || pol.polname,
         concat_ws(' ', pol.polcmd, pol.polpermissive, pol.polroles::regrole[],
                   pg_get_expr(pol.polqual, pol.polrelid), pg_get_expr(pol.polwithcheck, pol.polrelid))
  FROM pg_policy pol JOIN rel c ON c.oid = pol.polrelid
  UNION ALL
  SELECT 'trigger', t.tgrelid::regclass || ' ' || t.tgname, pg_get_triggerdef(t.oid)
  FROM pg_trigger t JOIN rel c ON c.oid = t.tgrelid WHERE NOT t.tgisinternal
  UNION ALL
  SELECT 'index', i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid)
  FROM pg_index i JOIN rel c ON c.oid = i.indrelid
  UNION ALL
  SELECT 'constraint', con.conrelid::regclass || ' ' || con.conname, pg_get_constraintdef(con.oid)
  FROM pg_constraint con WHERE con.connamespace = (SELECT oid FROM nsp)
  UNION ALL
  -- comments (what psql shows): of the members, of what is in the schema
  -- without being a member (the relation of a composite type, constraints),
  -- and of what hangs on a relation (columns, triggers, policies, indexes)
  SELECT 'comment', pg_describe_object(ds.classoid, ds.objoid, ds.objsubid), ds.description
  FROM pg_description ds
  WHERE EXISTS (SELECT FROM pg_depend d
                WHERE d.classid = ds.classoid AND d.objid = ds.objoid
                  AND d.refclassid = 'pg_extension'::regclass AND d.refobjid = (SELECT oid FROM ext))
     OR (pg_identify_object(ds.classoid, ds.objoid, 0)).schema = 'windowing'
     OR EXISTS (SELECT FROM pg_depend d JOIN rel c ON c.oid = d.refobjid
                WHERE d.classid = ds.classoid AND d.objid = ds.objoid
                  AND d.refclassid = 'pg_class'::regclass)
  UNION ALL
  -- what pg_dump keeps of the extension's own tables
  SELECT 'dumped', u.tab::regclass::text, u.cond
  FROM pg_extension e, unnest(e.extconfig, e.extcondition) AS u(tab, cond)
  WHERE e.oid = (SELECT oid FROM ext)
$$;
CREATE TEMP TABLE updated AS SELECT * FROM pg_temp.windowing_schema();
DROP EXTENSION windowing;
CREATE EXTENSION windowing;
SELECT extversion FROM pg_extension WHERE extname = 'windowing';
CREATE TEMP TABLE fresh AS SELECT * FROM pg_temp.windowing_schema();
-- every kind of thing was compared
SELECT what, count(*) > 0 AS compared FROM updated GROUP BY what ORDER BY what;
-- and nothing differs
(SELECT 'upgraded only' AS side, * FROM updated EXCEPT SELECT 'upgraded only', * FROM fresh)
UNION ALL
(SELECT 'fresh only', * FROM fresh EXCEPT SELECT 'fresh only', * FROM updated)
ORDER BY what, name, side;
-- a comment on a part of an object is compared too
COMMENT ON COLUMN windowing.assigner.tz IS 'zone of calendar windows';
COMMENT ON POLICY owner_only ON windowing.pipeline IS 'a pipeline is its owner''s';
SELECT * FROM pg_temp.windowing_schema() EXCEPT SELECT * FROM fresh ORDER BY name;
COMMENT ON COLUMN windowing.assigner.tz IS NULL;
COMMENT ON POLICY owner_only ON windowing.pipeline IS NULL;

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
-- an upsert result table that re-fires: room for HOT updates since 0.6
SELECT windowing.create_pipeline('upgraded_late', 'upgrade_events', 'ts', '{k}',
    windowing.tumbling('10 milliseconds'), allowed_lateness => '5 milliseconds', start => false);
-- sliding windows with allowed lateness: state per window before 0.6, from
-- slices since: it keeps its state per window
SELECT windowing.create_pipeline('upgraded_late_hop', 'upgrade_events', 'ts', '{k}',
    windowing.hopping('10 milliseconds', '5 milliseconds'), allowed_lateness => '5 milliseconds',
    start => false);
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
SELECT relname, reloptions FROM pg_class WHERE relname LIKE 'upgraded%_results' ORDER BY 1;
-- the queue is consumed, as it was, numbered on from the shared sequence by
-- one of its own, which is not the extension's
SELECT * FROM windowing.queues;
SELECT pg_get_serial_sequence('upgrade_events', 'windowing_seq') AS sequence,
       pg_get_expr(d.adbin, d.adrelid) AS old_default
FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = 'upgrade_events'::regclass AND a.attname = 'windowing_seq';
SELECT count(*) AS extension_members FROM pg_depend
WHERE refclassid = 'pg_extension'::regclass AND objid = pg_get_serial_sequence('upgrade_events', 'windowing_seq')::regclass;
INSERT INTO upgrade_events VALUES (1, 20);
SELECT k, ts, windowing_seq FROM upgrade_events ORDER BY windowing_seq;
SELECT windowing.process('upgraded');
SELECT windowing.flush('upgraded');
SELECT k, window_start, count FROM upgraded_results ORDER BY 1, 2;
SELECT windowing.drop_pipeline(p, drop_tables => true)
FROM unnest(ARRAY['upgraded', 'upgraded_cumulate', 'upgraded_late', 'upgraded_late_hop']) p;
DROP TABLE upgrade_events;
-- the tests that follow start from a fresh install (pipeline ids from 1)
DROP EXTENSION windowing;
CREATE EXTENSION windowing;
