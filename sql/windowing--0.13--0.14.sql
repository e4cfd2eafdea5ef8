-- windowing 0.13 -> 0.14

/* ---- A pipeline row's rules as a trigger, not CHECK constraints --------- */

ALTER TABLE windowing.pipeline
    DROP CONSTRAINT pipeline_emit_check,
    DROP CONSTRAINT pipeline_state_check,
    DROP CONSTRAINT pipeline_on_error_check,
    DROP CONSTRAINT pipeline_key_groups_check,
    DROP CONSTRAINT pipeline_join_type_check,
    DROP CONSTRAINT pipeline_join_check;
-- The rules a pipeline row keeps.  A trigger on the columns they read, not
-- CHECK constraints: the executor compiles every CHECK constraint of a
-- table at each UPDATE of it, and every step updates its pipeline's row
-- (its cursor and counters), which this trigger skips.
CREATE FUNCTION windowing._check_pipeline() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$
DECLARE
    p windowing.pipeline := NEW;
    rule text;
BEGIN
    rule := CASE
        WHEN p.emit NOT IN ('upsert', 'append') THEN 'pipeline_emit_check'
        WHEN p.state NOT IN ('running', 'paused', 'failed') THEN 'pipeline_state_check'
        WHEN p.on_error NOT IN ('stop', 'route') THEN 'pipeline_on_error_check'
        WHEN p.key_groups NOT BETWEEN 1 AND 32767 THEN 'pipeline_key_groups_check'
        WHEN p.join_type NOT IN ('inner', 'left', 'right', 'full') THEN 'pipeline_join_type_check'
        -- an aggregate pipeline has an assigner; a join, its bounds (an
        -- interval join) or an assigner (a window join)
        WHEN NOT ((p.join_lower IS NULL) = (p.join_upper IS NULL)
                  AND (p.join_lower IS NULL) = (p.join_lower_exclusive IS NULL)
                  AND (p.join_lower IS NULL) = (p.join_upper_exclusive IS NULL)
                  AND (p.join_type IS NOT NULL OR p.join_lower IS NULL)
                  AND (p.assigner IS DISTINCT FROM NULL) = (p.join_lower IS NULL))
            THEN 'pipeline_join_check'
    END;
    IF rule IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'check_violation',
            MESSAGE = format('new row for relation "pipeline" violates check constraint "%s"', rule),
            DETAIL = format('Pipeline "%s".', p.name), TABLE = 'pipeline', CONSTRAINT = rule;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER pipeline_check
    AFTER INSERT OR UPDATE OF emit, state, on_error, key_groups, join_type, join_lower, join_upper,
                              join_lower_exclusive, join_upper_exclusive, assigner
    ON windowing.pipeline FOR EACH ROW EXECUTE FUNCTION windowing._check_pipeline();

/* ---- State goes with its pipeline by a trigger, not foreign keys -------- */

ALTER TABLE windowing.window_state DROP CONSTRAINT window_state_pipeline_id_fkey;
ALTER TABLE windowing.state_log DROP CONSTRAINT state_log_pipeline_id_fkey;
-- A dropped pipeline's state goes with its row.  A trigger, not foreign
-- keys: a key's check cost every new window_state row and every step's
-- state_log row an index probe and a lock of the pipeline's row, which
-- tripled the cost of inserting them; and only a step that holds the
-- pipeline's lock writes them, which drop_pipeline takes before it deletes.
CREATE FUNCTION windowing._drop_state() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    DELETE FROM windowing.window_state WHERE pipeline_id OPERATOR(pg_catalog.=) OLD.id;
    DELETE FROM windowing.state_log WHERE pipeline_id OPERATOR(pg_catalog.=) OLD.id;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION windowing._drop_state() FROM PUBLIC;
CREATE TRIGGER pipeline_state_gone AFTER DELETE ON windowing.pipeline
    FOR EACH ROW EXECUTE FUNCTION windowing._drop_state();
