-- windowing 0.4 -> 0.5
\echo Use "ALTER EXTENSION windowing UPDATE" to load this file. \quit

-- From 0.5 on the library refuses to run pipelines in a database whose
-- extension is at another version (src/version.c), and its worker leaves
-- such a database for a back-off of up to half a minute: wake it at the
-- commit of this update, so pipelines resume at once.
SELECT windowing._wake_workers();

-- A pipeline's existence decides when the rows of its queue are deleted
-- (the worker empties a consumed queue only when every pipeline on it
-- runs), and the first pipeline of a queue alters it (two columns, an
-- index, a trigger).  So, as to create an index or a trigger on a table,
-- a pipeline's owner must have the privileges of the queue's owner: else
-- a role that may only read a queue could stop it from ever being emptied
-- with a paused pipeline of its own.  Pipelines made before 0.5 are left
-- as they are; the rule holds whenever a pipeline gets an owner.
CREATE FUNCTION windowing._check_queue_owner(owner regrole, source regclass) RETURNS boolean
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    queue_owner oid;
    queue_name  name;
BEGIN
    SELECT c.relowner, c.relname INTO queue_owner, queue_name FROM pg_class c WHERE c.oid = source;
    IF NOT pg_has_role(owner, queue_owner, 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table "%"', queue_name
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = format('The owner of a pipeline must have the privileges of the owner of its source table, role "%s", since the pipeline decides when the table''s rows are deleted.',
                                  pg_get_userbyid(queue_owner)),
                  HINT = format('Have a role with the privileges of role "%s" own the pipeline.',
                                pg_get_userbyid(queue_owner));
    END IF;
    RETURN true;
END
$$;

-- Every new pipeline row meets the rule here: create_pipeline's, made as
-- its caller (a superuser, who bypasses this policy, has every role's
-- privileges), and any row written by hand.  Restrictive, like own_tables.
CREATE POLICY own_queue ON windowing.pipeline AS RESTRICTIVE FOR INSERT
    WITH CHECK (windowing._check_queue_owner(owner, source));

-- And every change of owner, by alter_pipeline_owner() or by hand: a
-- policy cannot compare a row with its old version, and must not refuse
-- the other updates of a pipeline made before 0.5.
CREATE FUNCTION windowing._owner_changed() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM windowing._check_queue_owner(NEW.owner, NEW.source);
    RETURN NEW;
END
$$;
CREATE TRIGGER queue_owner BEFORE UPDATE OF owner ON windowing.pipeline
    FOR EACH ROW WHEN (OLD.owner IS DISTINCT FROM NEW.owner)
    EXECUTE FUNCTION windowing._owner_changed();

-- The view runs as the extension's owner and so shows every pipeline;
-- last_error quotes what PostgreSQL quotes in errors, row data included.
-- Like pg_stat_activity's query, it is shown only to roles with the
-- privileges of the pipeline's owner and to pg_read_all_stats, and is NULL
-- for others, who keep the rest of the row.
CREATE OR REPLACE VIEW windowing.pipeline_stats AS
SELECT p.name, p.state,
       CASE WHEN p.time_type OPERATOR(pg_catalog.=) 'pg_catalog.timestamptz'::pg_catalog.regtype
            THEN windowing._as_timestamptz(p.watermark)::text ELSE p.watermark::text END AS watermark,
       CASE WHEN p.time_type OPERATOR(pg_catalog.=) 'pg_catalog.timestamptz'::pg_catalog.regtype
            AND pg_catalog.isfinite(windowing._as_timestamptz(p.watermark))
            THEN pg_catalog.now() OPERATOR(pg_catalog.-) windowing._as_timestamptz(p.watermark) END AS lag,
       p.rows_consumed, p.windows_fired, p.late_routed, p.late_dropped,
       coalesce(windowing._state_windows(p.id, p.steps), s.windows) AS open_windows,
       m.bytes AS state_memory_bytes,
       CASE WHEN m.bytes OPERATOR(pg_catalog.>) 0 THEN 0 ELSE coalesce(s.bytes, 0) END AS state_spilled_bytes,
       p.steps, p.last_step_at, p.failures,
       CASE WHEN pg_catalog.pg_has_role(p.owner, 'USAGE')
                 OR pg_catalog.pg_has_role('pg_read_all_stats'::pg_catalog.name, 'USAGE')
            THEN p.last_error END AS last_error
FROM windowing.pipeline p
LEFT JOIN LATERAL (SELECT pg_catalog.count(*) AS windows,
                          pg_catalog.sum(pg_catalog.octet_length(w.state))::bigint AS bytes
                   FROM windowing.window_state w
                   WHERE w.pipeline_id OPERATOR(pg_catalog.=) p.id) s ON true
CROSS JOIN LATERAL (SELECT windowing._state_memory_bytes(p.id, p.steps) AS bytes) m;

-- _forget_state(id) evicts a pipeline's state from shared memory, so that
-- its next steps read it from the heap: any role could slow any pipeline
-- down with it.  It is the superuser's alone now (tests evict state with
-- it, as a restart would), and drop_pipeline, run by the pipeline's owner,
-- frees the state of the pipeline it deleted through the function below,
-- which frees only the state of a pipeline that no longer exists.  As the
-- extension's owner it sees every pipeline, past row-level security.
REVOKE EXECUTE ON FUNCTION windowing._forget_state(int) FROM PUBLIC;

CREATE FUNCTION windowing._forget_dropped_state(pipeline_id int) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
SELECT windowing._forget_state($1)
WHERE NOT EXISTS (SELECT FROM windowing.pipeline p WHERE p.id OPERATOR(pg_catalog.=) $1)
$$;

CREATE OR REPLACE FUNCTION windowing.drop_pipeline(name text, drop_tables boolean DEFAULT false)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p windowing.pipeline;
BEGIN
    PERFORM windowing._check_owner(name);
    PERFORM windowing._lock_pipeline(name);
    DELETE FROM windowing.pipeline WHERE pipeline.name = drop_pipeline.name RETURNING * INTO p;
    PERFORM windowing._forget_dropped_state(p.id);
    IF drop_tables AND EXISTS (SELECT FROM pg_class WHERE oid = p.result_table) THEN
        EXECUTE format('DROP TABLE %s', p.result_table);
    END IF;
    IF drop_tables AND EXISTS (SELECT FROM pg_class WHERE oid = p.late_table) THEN
        EXECUTE format('DROP TABLE %s', p.late_table);
    END IF;
END
$$;

-- Cumulating windows are computed from slices from 0.5 on (slices.c), as
-- sliding windows are from 0.3.  A cumulating pipeline made before keeps
-- its state per window, which is what its stored windows are.
UPDATE windowing.pipeline SET sliced = false
WHERE (assigner).kind OPERATOR(pg_catalog.=) 'cumulating';
