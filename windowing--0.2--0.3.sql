-- windowing 0.2 -> 0.3
\echo Use "ALTER EXTENSION windowing UPDATE" to load this file. \quit

-- A pipeline names its owner by OID, which no dependency protects: REASSIGN
-- OWNED and DROP OWNED pass it by, and its role can then be dropped.  This
-- hands a pipeline to another role, as ALTER TABLE ... OWNER TO does a
-- table: its owner (or a superuser) may give it to a role it can act as.
CREATE FUNCTION windowing.alter_pipeline_owner(name text, new_owner regrole) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM windowing._check_owner(name);
    IF new_owner IS NULL THEN
        RAISE EXCEPTION 'new owner must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF NOT pg_has_role(current_user, new_owner, 'MEMBER') THEN
        RAISE EXCEPTION 'must be able to act as role "%"', new_owner
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'A pipeline can only be given to a role whose rights its giver has.';
    END IF;
    PERFORM windowing._lock_pipeline(name);
    UPDATE windowing.pipeline SET owner = new_owner WHERE pipeline.name = alter_pipeline_owner.name;
END
$$;
