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
