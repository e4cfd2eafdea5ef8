-- windowing 0.2 -> 0.3
\echo Use "ALTER EXTENSION windowing UPDATE" to load this file. \quit

-- Where a tick's scan of the queue starts (pipeline.c, open_tick): every
-- row numbered up to scan_from is consumed or aborted; scan_next becomes
-- scan_from once no transaction older than scan_next_xid runs.
ALTER TABLE windowing.pipeline
    ADD COLUMN scan_from bigint NOT NULL DEFAULT 0,
    ADD COLUMN scan_next bigint,
    ADD COLUMN scan_next_xid xid8;
-- scan_from is an arrival number: a dump must carry the numbers' sequence
-- along with the pipelines, or a restored queue would number rows from 1
-- again, below every scan point.
SELECT pg_catalog.pg_extension_config_dump('windowing.queue_seq', '');

-- Sliding windows of pipelines created from 0.3 on may be kept as slices
-- (operator.c); older pipelines keep their state per window.
ALTER TABLE windowing.pipeline ADD COLUMN sliced boolean NOT NULL DEFAULT false;
ALTER TABLE windowing.pipeline ALTER COLUMN sliced SET DEFAULT true;

-- Rows committed into a queue wake its database's worker at once, so a
-- window's result follows the row that closed it within milliseconds
-- instead of a poll interval.
CREATE FUNCTION windowing._queue_rows_added() RETURNS trigger
AS 'MODULE_PATHNAME', 'windowing_queue_rows_added' LANGUAGE C;

CREATE FUNCTION windowing._watch_queue(source regclass) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_trigger WHERE tgrelid = source AND tgname = 'windowing_wake') THEN
        EXECUTE format('CREATE TRIGGER windowing_wake AFTER INSERT ON %s '
                       'FOR EACH STATEMENT EXECUTE FUNCTION windowing._queue_rows_added()', source);
    END IF;
END
$$;

SELECT windowing._watch_queue(source) FROM (SELECT DISTINCT source FROM windowing.pipeline) queues;

-- Window states and pipeline definitions are written by the extension's
-- code only.  A forged state would reach the aggregates' C functions as if
-- they had made it, and a changed definition would misread the stored
-- states; a row's id is never chosen, so it never meets another's state.
-- Users keep what pause, resume and their steps write as them.
REVOKE INSERT, UPDATE, DELETE ON windowing.window_state FROM PUBLIC;
REVOKE INSERT, UPDATE ON windowing.pipeline FROM PUBLIC;
GRANT INSERT (name, owner, source, time_column, time_type, key_columns, assigner, aggregates,
              max_out_of_orderness, allowed_lateness, result_table, late_table, emit, state,
              idle_timeout)
    ON windowing.pipeline TO PUBLIC;
GRANT UPDATE (state, tick_lo, tick_hi, last_seq, watermark, max_seen, steps, rows_consumed,
              windows_fired, late_routed, late_dropped, last_step_at, last_row_at, last_error,
              failures, scan_from, scan_next, scan_next_xid, owner)
    ON windowing.pipeline TO PUBLIC;

-- A pipeline written by hand must name a source its owner may read and
-- result and late tables it owns, as create_pipeline's do: a superuser's
-- drop_pipeline(drop_tables => true) must not drop someone else's table.
CREATE POLICY own_tables ON windowing.pipeline AS RESTRICTIVE FOR INSERT
    WITH CHECK (pg_catalog.has_table_privilege(source, 'SELECT')
                AND pg_catalog.pg_has_role((SELECT c.relowner FROM pg_catalog.pg_class c
                                            WHERE c.oid OPERATOR(pg_catalog.=) result_table), 'USAGE')
                AND (late_table IS NULL
                     OR pg_catalog.pg_has_role((SELECT c.relowner FROM pg_catalog.pg_class c
                                                WHERE c.oid OPERATOR(pg_catalog.=) late_table), 'USAGE')));

-- A pipeline tells keys apart by their bytes; an upsert result table's
-- unique key by the types' equality.  Key types where the two differ are
-- refused for upsert, where two keys would share one result row.
CREATE FUNCTION windowing._check_upsert_keys(source regclass, key_columns name[]) RETURNS void
AS 'MODULE_PATHNAME', 'windowing_check_upsert_keys' LANGUAGE C STRICT;

-- create_pipeline: refuses those keys, and a name too long for the names
-- of its tables (which PostgreSQL would silently truncate).
CREATE OR REPLACE FUNCTION windowing.create_pipeline(
    name                 text,
    source               regclass,
    time_column          name,
    key_columns          name[]   DEFAULT '{}',
    assigner             windowing.assigner DEFAULT NULL,
    aggregates           text     DEFAULT 'count(*)',
    max_out_of_orderness interval DEFAULT '0',
    allowed_lateness     interval DEFAULT '0',
    result_table         name     DEFAULT NULL,
    late_table           name     DEFAULT NULL,
    emit                 text     DEFAULT 'upsert',
    start                boolean  DEFAULT true,
    idle_timeout         interval DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp       text := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                       WHERE c.oid = source);
    ttype     text;
    wtype     text;
    res_name  text := coalesce(result_table, name || '_results');
    late_name text := coalesce(late_table, name || '_late');
    cols      text := '';
    keys      text := '';
    k         name;
    a         record;
BEGIN
    IF name IS NULL OR name = '' THEN
        RAISE EXCEPTION 'pipeline name must not be empty' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF source IS NULL OR key_columns IS NULL OR aggregates IS NULL
       OR allowed_lateness IS NULL OR emit IS NULL OR start IS NULL THEN
        RAISE EXCEPTION 'only time_column, max_out_of_orderness, result_table, late_table and idle_timeout may be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF assigner IS NULL THEN
        RAISE EXCEPTION 'a pipeline needs an assigner'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass assigner => windowing.tumbling(''1 minute''), windowing.hopping(...) or windowing.cumulating(...).';
    END IF;
    IF emit NOT IN ('upsert', 'append') THEN
        RAISE EXCEPTION 'emit must be ''upsert'' or ''append''' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF windowing._pipeline_owner(name) IS NOT NULL THEN
        RAISE EXCEPTION 'pipeline "%" already exists', name USING ERRCODE = 'duplicate_object';
    END IF;
    -- PostgreSQL would cut the tables' names to fit, and nobody would find them
    IF (result_table IS NULL AND (name || '_results')::name::text <> name || '_results')
       OR (late_table IS NULL AND (name || '_late')::name::text <> name || '_late') THEN
        RAISE EXCEPTION 'pipeline name "%" is too long to name its tables', name
            USING ERRCODE = 'name_too_long',
                  DETAIL = format('"%s_results" and "%s_late" must fit in %s bytes.', name, name,
                                  current_setting('max_identifier_length')),
                  HINT = 'Pass result_table and late_table, or use a shorter name.';
    END IF;
    IF (SELECT relkind FROM pg_class WHERE oid = source) NOT IN ('r', 'p') THEN
        RAISE EXCEPTION '"%" is not a table', source USING ERRCODE = 'wrong_object_type';
    END IF;
    IF NOT has_table_privilege(source, 'SELECT') THEN
        RAISE EXCEPTION 'permission denied for table %', source
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'A pipeline reads its source with the rights of its owner.';
    END IF;
    PERFORM windowing._check_duration(max_out_of_orderness, 'max_out_of_orderness');
    PERFORM windowing._check_duration(allowed_lateness, 'allowed_lateness');
    PERFORM windowing._check_duration(idle_timeout, 'idle_timeout');
    IF emit = 'upsert' THEN
        PERFORM windowing._check_upsert_keys(source, key_columns);
    END IF;
    FOR a IN SELECT * FROM windowing._describe(source, time_column, key_columns, assigner, aggregates) LOOP
        cols := cols || format('%I %s, ', a.column_name, a.column_type);
    END LOOP;
    -- no time column: processing time, the clock of the step reading a row
    ttype := coalesce(windowing._column_type(source, time_column), 'timestamp with time zone');
    -- count windows are numbered by rows
    wtype := CASE WHEN (assigner).kind = 'counting' THEN 'bigint' ELSE ttype END;
    FOREACH k IN ARRAY key_columns LOOP
        keys := keys || format('%I %s, ', k, windowing._column_type(source, k));
    END LOOP;

    -- what the queue reader needs: the inserting transaction and an arrival
    -- number (a queue read by several pipelines is prepared once)
    IF windowing._column_type(source, 'windowing_seq') IS NULL THEN
        EXECUTE format('ALTER TABLE %s ADD COLUMN windowing_xid xid8 NOT NULL '
                       'DEFAULT pg_catalog.pg_current_xact_id(), ADD COLUMN windowing_seq '
                       'bigint NOT NULL DEFAULT pg_catalog.nextval(''windowing.queue_seq''::pg_catalog.regclass)',
                       source);
        EXECUTE format('CREATE INDEX ON %s (windowing_seq)', source);
    END IF;
    PERFORM windowing._watch_queue(source);

    EXECUTE format('CREATE TABLE %I.%I (%s window_start %s NOT NULL, window_end %s NOT NULL, '
                   'window_time %s NOT NULL, %s fire_count int NOT NULL, is_final boolean NOT NULL, '
                   'fired_at timestamptz NOT NULL%s)',
                   nsp, res_name, keys, wtype, wtype, wtype, cols,
                   -- in the order windows fire, so the index grows at its right edge
                   CASE WHEN emit = 'upsert' THEN
                       format(', UNIQUE NULLS NOT DISTINCT (window_end, %s window_start)',
                              (SELECT string_agg(format('%I, ', c), '') FROM unnest(key_columns) c))
                   ELSE '' END);
    IF late_name <> '' THEN
        EXECUTE format('CREATE TABLE %I.%I (routed_at timestamptz NOT NULL DEFAULT pg_catalog.now(), '
                       'event_time %s, watermark %s, reason text NOT NULL, missed_windows windowing.%s[], '
                       'row_data jsonb NOT NULL)',
                       nsp, late_name, ttype, ttype,
                       CASE WHEN ttype = 'bigint' THEN 'bigint_window' ELSE 'time_window' END);
    END IF;

    INSERT INTO windowing.pipeline (name, owner, source, time_column, time_type, key_columns,
        assigner, aggregates, max_out_of_orderness, allowed_lateness, result_table, late_table,
        emit, state, idle_timeout)
    VALUES (name, current_user::regrole, source, time_column, ttype::regtype, key_columns,
        assigner, aggregates, max_out_of_orderness, allowed_lateness,
        format('%I.%I', nsp, res_name)::regclass,
        CASE WHEN late_name <> '' THEN format('%I.%I', nsp, late_name)::regclass END,
        emit, CASE WHEN start THEN 'running' ELSE 'paused' END, idle_timeout);
    IF start THEN
        PERFORM windowing._wake_workers();
    END IF;
END
$$;

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
