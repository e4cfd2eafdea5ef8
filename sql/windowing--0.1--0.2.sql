/* windowing--0.1--0.2.sql: continuous pipelines. */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION windowing UPDATE TO '0.2'" to load this file. \quit

-- How a pipeline assigns rows to windows.  Lengths are intervals for both
-- kinds of time column; a bigint time column holds epoch milliseconds.
CREATE TYPE windowing.assigner AS (
    kind       text,
    size       interval,
    slide      interval,
    "offset"   interval,
    tz         text,
    gap_column name,
    rows       bigint,
    rows_slide bigint
);

CREATE FUNCTION windowing.tumbling(size interval, "offset" interval DEFAULT '0', tz text DEFAULT NULL)
RETURNS windowing.assigner LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ROW('tumbling', size, NULL, "offset", tz, NULL, NULL, NULL)::windowing.assigner;

CREATE FUNCTION windowing.hopping(size interval, slide interval, "offset" interval DEFAULT '0', tz text DEFAULT NULL)
RETURNS windowing.assigner LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ROW('hopping', size, slide, "offset", tz, NULL, NULL, NULL)::windowing.assigner;

CREATE FUNCTION windowing.cumulating(step interval, max_size interval, "offset" interval DEFAULT '0', tz text DEFAULT NULL)
RETURNS windowing.assigner LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ROW('cumulating', max_size, step, "offset", tz, NULL, NULL, NULL)::windowing.assigner;

-- Session windows: each row opens [ts, ts + gap); windows that overlap or
-- touch merge, their states combined.
CREATE FUNCTION windowing.session(gap interval)
RETURNS windowing.assigner LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ROW('session', gap, NULL, NULL, NULL, NULL, NULL, NULL)::windowing.assigner;

-- The same with each row's gap read from one of its columns (an interval).
CREATE FUNCTION windowing.session_dynamic(gap_column name)
RETURNS windowing.assigner LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ROW('session_dynamic', NULL, NULL, NULL, NULL, gap_column, NULL, NULL)::windowing.assigner;

-- Flink's countWindow(size, slide): per key, in arrival order, every slide
-- rows a window of the last size rows.  (count_window is the name of the
-- SQL window function with the same arguments.)  Its windows are numbered
-- by rows: [first row, last row + 1) of the key.
CREATE FUNCTION windowing.counting(size bigint, slide bigint DEFAULT NULL)
RETURNS windowing.assigner LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ROW('counting', NULL, NULL, NULL, NULL, NULL, size, coalesce(slide, size))::windowing.assigner;

-- Collect mode (Flink's ListState): every input of a window, as an array,
-- in arrival order.  A whole row: windowing.collect(source_table).
CREATE AGGREGATE windowing.collect(anycompatible) (
    SFUNC = pg_catalog.array_append,
    STYPE = anycompatiblearray,
    COMBINEFUNC = pg_catalog.array_cat,
    PARALLEL = SAFE
);

-- One row per pipeline: its definition, its cursor and its counters.
-- Times (watermark, max_seen) are in the time column's unit: microseconds
-- since 2000-01-01 for timestamptz, the column's own unit for bigint.
CREATE TABLE windowing.pipeline (
    id                   serial PRIMARY KEY,
    name                 text NOT NULL UNIQUE,
    owner                regrole NOT NULL,
    source               regclass NOT NULL,
    time_column          name,            -- NULL: processing time
    time_type            regtype NOT NULL,
    key_columns          name[] NOT NULL,
    assigner             windowing.assigner NOT NULL,
    aggregates           text NOT NULL,
    max_out_of_orderness interval,
    allowed_lateness     interval NOT NULL,
    result_table         regclass NOT NULL,
    late_table           regclass,
    emit                 text NOT NULL CHECK (emit IN ('upsert', 'append')),
    state                text NOT NULL DEFAULT 'running'
                         CHECK (state IN ('running', 'paused', 'failed')),
    created_at           timestamptz NOT NULL DEFAULT now(),
    -- cursor: the rows committed between tick_lo and tick_hi, past last_seq
    tick_lo              pg_snapshot,
    tick_hi              pg_snapshot,
    last_seq             bigint NOT NULL DEFAULT 0,
    watermark            bigint,
    max_seen             bigint,
    -- counters
    steps                bigint NOT NULL DEFAULT 0,
    rows_consumed        bigint NOT NULL DEFAULT 0,
    windows_fired        bigint NOT NULL DEFAULT 0,
    late_routed          bigint NOT NULL DEFAULT 0,
    late_dropped         bigint NOT NULL DEFAULT 0,
    last_step_at         timestamptz,
    idle_timeout         interval,
    last_row_at          timestamptz,     -- clock of the last step with rows
    last_error           text,
    failures             int NOT NULL DEFAULT 0
);
SELECT pg_catalog.pg_extension_config_dump('windowing.pipeline', '');
SELECT pg_catalog.pg_extension_config_dump('windowing.pipeline_id_seq', '');

-- Arrival numbers of queue rows, shared by every queue.
CREATE SEQUENCE windowing.queue_seq;

-- Window state of every pipeline, written by each step for the windows it
-- changed: after a crash, state is exactly what the last committed step
-- left.  key holds the key columns in binary form (send/receive).
CREATE TABLE windowing.window_state (
    pipeline_id  int NOT NULL REFERENCES windowing.pipeline (id) ON DELETE CASCADE,
    key          bytea NOT NULL,
    window_start bigint NOT NULL,
    window_end   bigint NOT NULL,
    fire_count   int NOT NULL,
    state        bytea NOT NULL,
    PRIMARY KEY (pipeline_id, key, window_start, window_end)
);
SELECT pg_catalog.pg_extension_config_dump('windowing.window_state', '');

-- A pipeline belongs to its owner: others neither see nor change its rows.
-- The views below show every pipeline (they run as the extension's owner).
ALTER TABLE windowing.pipeline ENABLE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON windowing.pipeline
    USING (pg_catalog.pg_has_role(owner, 'USAGE'))
    WITH CHECK (pg_catalog.pg_has_role(owner, 'USAGE'));
ALTER TABLE windowing.window_state ENABLE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON windowing.window_state
    USING (EXISTS (SELECT 1 FROM windowing.pipeline p
                   WHERE p.id OPERATOR(pg_catalog.=) pipeline_id));
GRANT SELECT, INSERT, UPDATE, DELETE ON windowing.pipeline, windowing.window_state TO PUBLIC;
GRANT USAGE ON SEQUENCE windowing.pipeline_id_seq, windowing.queue_seq TO PUBLIC;

-- Pause, resume and drop wait for a step of the pipeline to finish.
CREATE FUNCTION windowing._lock_pipeline(pipeline_name text) RETURNS void
AS 'MODULE_PATHNAME', 'windowing_lock_pipeline' LANGUAGE C STRICT;

-- Starts (within a second) the worker of this database when the
-- transaction commits; nothing if the library is not preloaded.
CREATE FUNCTION windowing._wake_workers() RETURNS void
AS 'MODULE_PATHNAME', 'windowing_wake_launcher' LANGUAGE C;

-- The owner of a pipeline whoever asks, so that others get a permission
-- error rather than "does not exist".
CREATE FUNCTION windowing._pipeline_owner(pipeline_name text) RETURNS regrole
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT p.owner FROM windowing.pipeline p WHERE p.name OPERATOR(pg_catalog.=) $1 $$;

CREATE FUNCTION windowing._check_owner(pipeline_name text) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    o regrole := windowing._pipeline_owner(pipeline_name);
BEGIN
    IF o IS NULL THEN
        RAISE EXCEPTION 'pipeline "%" does not exist', pipeline_name
            USING ERRCODE = 'undefined_object';
    END IF;
    IF NOT pg_has_role(current_user, o, 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of pipeline "%"', pipeline_name
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Only the owner of a pipeline or a superuser may run, change or drop it.';
    END IF;
END
$$;

CREATE FUNCTION windowing._check_duration(d interval, what text) RETURNS void
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF d < interval '0' THEN
        RAISE EXCEPTION '% must not be negative', what USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF extract(year FROM d) <> 0 OR extract(month FROM d) <> 0 THEN
        RAISE EXCEPTION '% cannot be in months or years', what
            USING ERRCODE = 'invalid_parameter_value', HINT = 'Give it in days and time.';
    END IF;
END
$$;

-- Checks a definition; returns the name and type of each aggregate output.
CREATE FUNCTION windowing._describe(source regclass, time_column name, key_columns name[],
                                    assigner windowing.assigner, aggregates text)
RETURNS TABLE (column_name text, column_type text)
AS 'MODULE_PATHNAME', 'windowing_describe'
LANGUAGE C;

-- A column's type as DDL, with its typmod.
CREATE FUNCTION windowing._column_type(rel regclass, col name) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
RETURN (SELECT format_type(atttypid, atttypmod) FROM pg_attribute
        WHERE attrelid = rel AND attname = col AND NOT attisdropped);

CREATE FUNCTION windowing.create_pipeline(
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

    EXECUTE format('CREATE TABLE %I.%I (%s window_start %s NOT NULL, window_end %s NOT NULL, '
                   'window_time %s NOT NULL, %s fire_count int NOT NULL, is_final boolean NOT NULL, '
                   'fired_at timestamptz NOT NULL%s)',
                   nsp, res_name, keys, wtype, wtype, wtype, cols,
                   CASE WHEN emit = 'upsert' THEN
                       format(', UNIQUE NULLS NOT DISTINCT (%s window_start, window_end)',
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

CREATE FUNCTION windowing.drop_pipeline(name text, drop_tables boolean DEFAULT false)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p windowing.pipeline;
BEGIN
    PERFORM windowing._check_owner(name);
    PERFORM windowing._lock_pipeline(name);
    DELETE FROM windowing.pipeline WHERE pipeline.name = drop_pipeline.name RETURNING * INTO p;
    PERFORM windowing._forget_state(p.id);
    IF drop_tables AND EXISTS (SELECT FROM pg_class WHERE oid = p.result_table) THEN
        EXECUTE format('DROP TABLE %s', p.result_table);
    END IF;
    IF drop_tables AND EXISTS (SELECT FROM pg_class WHERE oid = p.late_table) THEN
        EXECUTE format('DROP TABLE %s', p.late_table);
    END IF;
END
$$;

CREATE FUNCTION windowing.pause_pipeline(name text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM windowing._check_owner(name);
    PERFORM windowing._lock_pipeline(name);
    UPDATE windowing.pipeline SET state = 'paused' WHERE pipeline.name = pause_pipeline.name;
END
$$;

CREATE FUNCTION windowing.resume_pipeline(name text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM windowing._check_owner(name);
    PERFORM windowing._lock_pipeline(name);
    UPDATE windowing.pipeline SET state = 'running', failures = 0, last_error = NULL
    WHERE pipeline.name = resume_pipeline.name;
    PERFORM windowing._wake_workers();
END
$$;

-- One step now, in this transaction: what the background worker runs.
CREATE FUNCTION windowing.process(name text, max_rows bigint DEFAULT NULL) RETURNS bigint
AS 'MODULE_PATHNAME', 'windowing_process' LANGUAGE C;

CREATE FUNCTION windowing.advance_watermark(name text, ts timestamptz) RETURNS void
AS 'MODULE_PATHNAME', 'windowing_advance_watermark' LANGUAGE C STRICT;

CREATE FUNCTION windowing.advance_watermark(name text, ts bigint) RETURNS void
AS 'MODULE_PATHNAME', 'windowing_advance_watermark_bigint' LANGUAGE C STRICT;

CREATE FUNCTION windowing.advance_watermark(name text, ts text) RETURNS void
AS 'MODULE_PATHNAME', 'windowing_advance_watermark_text' LANGUAGE C STRICT;

CREATE FUNCTION windowing.flush(name text) RETURNS void
AS 'MODULE_PATHNAME', 'windowing_flush' LANGUAGE C STRICT;

-- What each window not fired yet would say if it fired now.
CREATE FUNCTION windowing.open_windows(name text)
RETURNS TABLE (key jsonb, window_start text, window_end text, results jsonb)
AS 'MODULE_PATHNAME', 'windowing_open_windows' LANGUAGE C STRICT;

-- The shared-memory image of a pipeline's state.
CREATE FUNCTION windowing._state_memory_bytes(pipeline_id int, steps bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'windowing_state_memory_bytes' LANGUAGE C STRICT;

CREATE FUNCTION windowing._forget_state(pipeline_id int) RETURNS void
AS 'MODULE_PATHNAME', 'windowing_forget_state' LANGUAGE C STRICT;

-- Microseconds since 2000-01-01 as timestamptz (the storage of both).
CREATE FUNCTION windowing._as_timestamptz(bigint) RETURNS timestamptz
AS 'MODULE_PATHNAME', 'windowing_as_timestamptz' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE VIEW windowing.pipelines AS
SELECT name, owner, state, source, time_column, key_columns, assigner, aggregates,
       max_out_of_orderness, allowed_lateness, result_table, late_table, emit,
       'windowing_' OPERATOR(pg_catalog.||) id AS channel, created_at
FROM windowing.pipeline;

CREATE VIEW windowing.pipeline_stats AS
SELECT p.name, p.state,
       CASE WHEN p.time_type OPERATOR(pg_catalog.=) 'pg_catalog.timestamptz'::pg_catalog.regtype
            THEN windowing._as_timestamptz(p.watermark)::text ELSE p.watermark::text END AS watermark,
       CASE WHEN p.time_type OPERATOR(pg_catalog.=) 'pg_catalog.timestamptz'::pg_catalog.regtype
            AND pg_catalog.isfinite(windowing._as_timestamptz(p.watermark))
            THEN pg_catalog.now() OPERATOR(pg_catalog.-) windowing._as_timestamptz(p.watermark) END AS lag,
       p.rows_consumed, p.windows_fired, p.late_routed, p.late_dropped,
       s.windows AS open_windows,
       m.bytes AS state_memory_bytes,
       CASE WHEN m.bytes OPERATOR(pg_catalog.>) 0 THEN 0 ELSE coalesce(s.bytes, 0) END AS state_spilled_bytes,
       p.steps, p.last_step_at, p.failures, p.last_error
FROM windowing.pipeline p
LEFT JOIN LATERAL (SELECT pg_catalog.count(*) AS windows,
                          pg_catalog.sum(pg_catalog.octet_length(w.state))::bigint AS bytes
                   FROM windowing.window_state w
                   WHERE w.pipeline_id OPERATOR(pg_catalog.=) p.id) s ON true
CROSS JOIN LATERAL (SELECT windowing._state_memory_bytes(p.id, p.steps) AS bytes) m;

GRANT SELECT ON windowing.pipelines, windowing.pipeline_stats TO PUBLIC;
