-- windowing 0.6 -> 0.7
/*
 * A failed step's record tells the whole story: windowing.pipeline and
 * pipeline_stats keep, besides last_error (the message) and last_error_at,
 * the error's SQLSTATE, detail and hint (last_error_sqlstate,
 * last_error_detail, last_error_hint: what a late row's error holds) and
 * last_error_seq, the arrival number of the row the step failed on when
 * one is known: the worker finds it as on_error 'route' does.
 * resume_pipeline() clears them with last_error.  A view's columns can
 * only be added at its end, and last_error's rule of who sees it now
 * covers detail and hint too, so pipeline_stats is made again.
 *
 * create_pipeline() writes into an existing table named by result_table
 * or late_table when it fits the pipeline (the columns it would make, of
 * the same names and types; other columns nullable or with a default; for
 * upsert, a unique index on the keys and window bounds; an owner whose
 * privileges the caller has) and refuses it, saying why, otherwise.
 *
 * Triggers: create_pipeline(trigger => 'early every <interval>') fires
 * windows before the watermark reaches their end as well; the window's
 * timer is kept with its state, and the result table has a pane column.
 * create_pipeline and alter_pipeline get a trigger argument (so both are
 * dropped and made again), and windowing.pipelines a trigger column.
 */
\echo Use "ALTER EXTENSION windowing UPDATE" to load this file. \quit

ALTER TABLE windowing.pipeline
    ADD COLUMN last_error_sqlstate text,
    ADD COLUMN last_error_detail   text,
    ADD COLUMN last_error_hint     text,
    ADD COLUMN last_error_seq      bigint;
GRANT UPDATE (last_error_sqlstate, last_error_detail, last_error_hint, last_error_seq)
    ON windowing.pipeline TO PUBLIC;

CREATE OR REPLACE FUNCTION windowing.resume_pipeline(name text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM windowing._check_owner(name);
    PERFORM windowing._lock_pipeline(name);
    UPDATE windowing.pipeline SET state = 'running', failures = 0, last_error = NULL,
                                  last_error_at = NULL, last_error_sqlstate = NULL,
                                  last_error_detail = NULL, last_error_hint = NULL,
                                  last_error_seq = NULL
    WHERE pipeline.name = resume_pipeline.name;
    PERFORM windowing._wake_workers();
END
$$;

DROP VIEW windowing.pipeline_stats;
-- The view runs as the extension's owner and so shows every pipeline;
-- last_error and its detail and hint quote what PostgreSQL quotes in
-- errors, row data included.  Like pg_stat_activity's query, they are shown
-- only to roles with the privileges of the pipeline's owner and to
-- pg_read_all_stats, and are NULL for others, who keep the rest of the row.
-- Times are shown in the time column's type: watermark_time and
-- max_event_time for timestamptz, watermark_ms and max_event_ms for bigint,
-- neither for timestamp, a local time that is no instant (watermark, as
-- text, for all three).
-- lag is event time: how far the watermark is behind the newest event time
-- read, never negative (a watermark given or flushed past it is no lag).
-- open_windows counts windows where the state is (shared memory, else the
-- heap); backlog_rows reads the queue as the caller.
CREATE VIEW windowing.pipeline_stats AS
SELECT p.name, p.state,
       CASE WHEN t.is_ts THEN windowing._as_timestamptz(p.watermark)::text
            WHEN t.is_ms THEN p.watermark::text
            ELSE windowing._as_timestamp(p.watermark)::text END AS watermark,
       CASE WHEN t.is_ts THEN windowing._as_timestamptz(p.watermark) END AS watermark_time,
       CASE WHEN t.is_ms THEN p.watermark END AS watermark_ms,
       CASE WHEN t.is_ts THEN windowing._as_timestamptz(p.max_seen) END AS max_event_time,
       CASE WHEN t.is_ms THEN p.max_seen END AS max_event_ms,
       CASE WHEN NOT t.is_ms AND p.watermark OPERATOR(pg_catalog.>=) p.max_seen THEN '0'::pg_catalog.interval
            WHEN NOT t.is_ms THEN windowing._as_timestamptz(p.max_seen)
                                  OPERATOR(pg_catalog.-) windowing._as_timestamptz(p.watermark) END AS lag,
       CASE WHEN t.is_ms AND p.watermark OPERATOR(pg_catalog.>=) p.max_seen THEN 0
            WHEN t.is_ms THEN p.max_seen OPERATOR(pg_catalog.-) p.watermark END AS lag_ms,
       windowing._backlog_rows(p.source, p.tick_lo, p.tick_hi, p.last_seq, p.scan_from) AS backlog_rows,
       p.rows_consumed, p.windows_fired, p.late_routed, p.late_dropped,
       coalesce(windowing._state_windows(p.id, p.steps), s.windows) AS open_windows,
       m.bytes AS state_memory_bytes,
       CASE WHEN m.bytes OPERATOR(pg_catalog.>) 0 THEN 0 ELSE coalesce(s.bytes, 0) END AS state_spilled_bytes,
       p.steps, p.last_step_at, p.last_row_at, p.failures,
       CASE WHEN e.shown THEN p.last_error END AS last_error,
       p.last_error_at, p.last_error_sqlstate,
       CASE WHEN e.shown THEN p.last_error_detail END AS last_error_detail,
       CASE WHEN e.shown THEN p.last_error_hint END AS last_error_hint,
       p.last_error_seq
FROM windowing.pipeline p
CROSS JOIN LATERAL (SELECT pg_catalog.pg_has_role(p.owner, 'USAGE')
                           OR pg_catalog.pg_has_role('pg_read_all_stats'::pg_catalog.name, 'USAGE')
                           AS shown) e
CROSS JOIN LATERAL (SELECT p.time_type OPERATOR(pg_catalog.=) 'pg_catalog.timestamptz'::pg_catalog.regtype
                           AS is_ts,
                           p.time_type OPERATOR(pg_catalog.=) 'pg_catalog.int8'::pg_catalog.regtype
                           AS is_ms) t
LEFT JOIN LATERAL (SELECT pg_catalog.count(*) AS windows,
                          pg_catalog.sum(pg_catalog.octet_length(w.state))::bigint AS bytes
                   FROM windowing.window_state w
                   WHERE w.pipeline_id OPERATOR(pg_catalog.=) p.id) s ON true
CROSS JOIN LATERAL (SELECT windowing._state_memory_bytes(p.id, p.steps) AS bytes) m;
GRANT SELECT ON windowing.pipeline_stats TO PUBLIC;
COMMENT ON VIEW windowing.pipeline_stats IS
    'progress, counters, state size and last error of every pipeline, with the row it failed on';

-- create_pipeline writes into a result or late table that exists already
-- when it is named: a table whose owner's privileges the pipeline's owner
-- has, as for the tables create_pipeline makes (a step writes it with the
-- owner's rights, drop_pipeline(drop_tables => true) drops it), that no
-- other pipeline writes, with every column create_pipeline would make, of
-- the same name and type, typmod included (a step checks its key and
-- aggregate columns against the result table's), and no other column that
-- a row the pipeline writes could not leave out (NOT NULL without a
-- default).  "types" are format_type()'s, as the table's are read.
CREATE FUNCTION windowing._check_existing_table(tbl regclass, pipeline text, what text,
                                                columns name[], types text[], written name[])
RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rel       record;
    col       record;
    writer    text;
    misfit    text := format('%s %s does not fit pipeline "%s"', what, tbl, pipeline);
    make_fit  text := format('Give the table the columns of a %s that create_pipeline makes, or name a table that does not exist for create_pipeline to create.', what);
BEGIN
    SELECT c.relkind, c.relowner INTO rel FROM pg_class c WHERE c.oid = tbl;
    IF rel.relkind NOT IN ('r', 'p') THEN
        RAISE EXCEPTION '"%" is not a table', tbl
            USING ERRCODE = 'wrong_object_type',
                  DETAIL = format('The %s of a pipeline must be a table.', what);
    END IF;
    IF NOT pg_has_role(rel.relowner, 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', tbl
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = format('A pipeline writes its %s with the rights of its owner, who must have the privileges of the table''s owner, role "%s", since drop_pipeline(drop_tables => true) drops the table.',
                                  what, pg_get_userbyid(rel.relowner)),
                  HINT = format('Create the pipeline as a role with the privileges of role "%s".',
                                pg_get_userbyid(rel.relowner));
    END IF;
    SELECT p.name INTO writer FROM windowing.pipeline p
    WHERE tbl IN (p.result_table, p.late_table) ORDER BY p.name LIMIT 1;
    IF writer IS NOT NULL THEN
        RAISE EXCEPTION 'table % is already written by pipeline "%"', tbl, writer
            USING ERRCODE = 'object_in_use',
                  HINT = 'Name a table that no other pipeline writes.';
    END IF;
    SELECT u.name, u.type, format_type(a.atttypid, a.atttypmod) AS found INTO col
    FROM unnest(columns, types) WITH ORDINALITY AS u(name, type, n)
    LEFT JOIN pg_attribute a ON a.attrelid = tbl AND a.attname = u.name AND NOT a.attisdropped
    WHERE a.attnum IS NULL OR format_type(a.atttypid, a.atttypmod) <> u.type
    ORDER BY u.n LIMIT 1;
    IF FOUND AND col.found IS NULL THEN
        RAISE EXCEPTION '%', misfit
            USING ERRCODE = 'undefined_column',
                  DETAIL = format('It has no column "%s" (%s).', col.name, col.type),
                  HINT = make_fit;
    ELSIF FOUND THEN
        RAISE EXCEPTION '%', misfit
            USING ERRCODE = 'datatype_mismatch',
                  DETAIL = format('Column "%s" is %s, and the pipeline writes %s.', col.name, col.found, col.type),
                  HINT = make_fit;
    END IF;
    SELECT a.attname AS name INTO col FROM pg_attribute a
    WHERE a.attrelid = tbl AND a.attnum > 0 AND NOT a.attisdropped AND a.attnotnull
      AND NOT a.atthasdef AND a.attidentity = '' AND a.attname <> ALL (written)
    ORDER BY a.attnum LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION '%', misfit
            USING ERRCODE = 'invalid_table_definition',
                  DETAIL = format('Column "%s" is NOT NULL without a default, and the pipeline does not write it.', col.name),
                  HINT = make_fit;
    END IF;
END
$$;

-- A step upserts a window's result row with INSERT ... ON CONFLICT on its
-- key columns and bounds: an existing upsert result table must have a
-- unique index on exactly those columns that ON CONFLICT can use (valid,
-- not partial, not deferrable) and that keeps one row for NULL keys (NULLS
-- NOT DISTINCT, where there are key columns).  create_pipeline does not
-- build it on a table it did not make: that is the table owner's call.
CREATE FUNCTION windowing._check_upsert_index(tbl regclass, key_columns name[]) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wanted name[] := ARRAY(SELECT c FROM unnest(key_columns || '{window_start, window_end}'::name[]) c
                           ORDER BY c);
BEGIN
    IF NOT EXISTS (SELECT FROM pg_index i
                   WHERE i.indrelid = tbl AND i.indisunique AND i.indisvalid AND i.indimmediate
                     AND i.indpred IS NULL AND i.indexprs IS NULL
                     AND (i.indnullsnotdistinct OR cardinality(key_columns) = 0)
                     AND ARRAY(SELECT a.attname FROM pg_attribute a
                               WHERE a.attrelid = tbl
                                 AND a.attnum = ANY ((i.indkey::int2[])[0:i.indnkeyatts - 1])
                               ORDER BY a.attname) = wanted
                     AND i.indnkeyatts = cardinality(wanted)) THEN
        RAISE EXCEPTION 'result table % has no unique index on the pipeline''s keys and window bounds', tbl
            USING ERRCODE = 'invalid_table_definition',
                  DETAIL = 'An upsert pipeline updates the row of a window that fires again by its key columns, window_start and window_end: that takes a unique index on exactly those columns, neither partial nor deferrable, NULLS NOT DISTINCT where there are key columns.',
                  HINT = format('Create it: CREATE UNIQUE INDEX ON %s (window_end, %swindow_start) NULLS NOT DISTINCT;',
                                tbl, (SELECT string_agg(format('%I, ', c), '') FROM unnest(key_columns) c));
    END IF;
END
$$;

-- Triggers: 'early every <interval>' fires windows before the watermark
-- reaches their end, and their result tables say which pane each firing
-- was.  create_pipeline and alter_pipeline take a trigger.
ALTER TABLE windowing.pipeline ADD COLUMN "trigger" text;
GRANT INSERT ("trigger"), UPDATE ("trigger") ON windowing.pipeline TO PUBLIC;

-- Checks a trigger for an assigner and a time type; true if it fires early.
CREATE FUNCTION windowing._check_trigger("trigger" text, assigner windowing.assigner, time_type regtype)
RETURNS boolean
AS 'MODULE_PATHNAME', 'windowing_check_trigger'
LANGUAGE C STABLE;

DROP FUNCTION windowing.create_pipeline(text, regclass, name, name[], windowing.assigner, text,
                                       interval, interval, name, name, text, boolean, interval,
                                       text, text);
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
    idle_timeout         interval DEFAULT NULL,
    retention            text     DEFAULT NULL,
    on_error             text     DEFAULT 'stop',
    "trigger"            text     DEFAULT NULL)
RETURNS int
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    new_id    int;
    nsp       text := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                       WHERE c.oid = source);
    kept      text := windowing._queue_retention(source);
    ttype     text;
    wtype     text;
    res_name  text := coalesce(result_table, name || '_results');
    late_name text := coalesce(late_table, name || '_late');
    res_rel   regclass;
    late_rel  regclass;
    -- the type of the windows a late row missed
    late_win  text;
    cols      text := '';
    keys      text := '';
    -- the result table's columns, as format_type() names their types
    agg_names name[] := '{}';
    agg_types text[] := '{}';
    key_types text[] := '{}';
    res_cols  name[];
    k         name;
    a         record;
    early     boolean;
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
    IF on_error IS NULL OR on_error NOT IN ('stop', 'route') THEN
        RAISE EXCEPTION 'on_error must be ''stop'' or ''route''' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF on_error = 'route' AND late_table = '' THEN
        RAISE EXCEPTION 'a pipeline with on_error ''route'' needs a late table'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Rows whose aggregate inputs fail are routed to the late table.',
                  HINT = 'Leave late_table unset, or name a table for it.';
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
        agg_names := agg_names || a.column_name::name;
        agg_types := agg_types || format_type(a.column_type::regtype, -1);
    END LOOP;
    -- no time column: processing time, the clock of the step reading a row
    ttype := coalesce(windowing._column_type(source, time_column), 'timestamp with time zone');
    -- a trigger that fires early makes results say which pane each row is
    early := windowing._check_trigger("trigger", assigner, ttype::regtype);
    -- count windows are numbered by rows
    wtype := CASE WHEN (assigner).kind = 'counting' THEN 'bigint' ELSE ttype END;
    late_win := CASE ttype WHEN 'bigint' THEN 'windowing.bigint_window'
                           WHEN 'timestamp without time zone' THEN 'windowing.timestamp_window'
                           ELSE 'windowing.time_window' END;
    -- the clock is an instant, and a timestamp column's zone is unknown
    IF idle_timeout IS NOT NULL AND ttype = 'timestamp without time zone' THEN
        RAISE EXCEPTION 'idle_timeout needs a timestamptz or bigint time column'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'The watermark would follow the clock, which is no local time.';
    END IF;
    FOREACH k IN ARRAY key_columns LOOP
        keys := keys || format('%I %s, ', k, windowing._column_type(source, k));
        key_types := key_types || windowing._column_type(source, k);
    END LOOP;

    -- a table becomes a queue by its owner's explicit choice only
    IF kept IS NULL AND retention IS NULL THEN
        RAISE EXCEPTION 'table % is not a queue', source
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'A queue''s rows are either consumed (deleted once every pipeline on it has read them) or kept.',
                  HINT = 'Pass retention => ''keep'' to leave its rows alone or retention => ''consume'' to have them deleted once read, or create a queue with windowing.create_queue().';
    ELSIF kept IS NULL THEN
        PERFORM windowing._make_queue(source, retention);
        IF retention = 'consume' THEN
            RAISE NOTICE 'rows of table % will be deleted once every pipeline on it has read them', source;
        END IF;
    ELSIF retention IS DISTINCT FROM kept AND retention IS NOT NULL THEN
        RAISE EXCEPTION 'queue % already has retention ''%''', source, kept
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Change it with windowing.alter_queue().';
    END IF;

    -- a table named by result_table or late_table may exist already
    IF result_table IS NOT NULL THEN
        res_rel := to_regclass(format('%I.%I', nsp, result_table));
    END IF;
    IF late_table <> '' THEN
        late_rel := to_regclass(format('%I.%I', nsp, late_table));
    END IF;
    IF res_rel IS NULL THEN
        EXECUTE format('CREATE TABLE %I.%I (%s window_start %s NOT NULL, window_end %s NOT NULL, '
                       'window_time %s NOT NULL, %s fire_count int NOT NULL, is_final boolean NOT NULL, '
                       '%sfired_at timestamptz NOT NULL%s)%s',
                       nsp, res_name, keys, wtype, wtype, wtype, cols,
                       CASE WHEN early THEN 'pane text NOT NULL, ' ELSE '' END,
                       -- in the order windows fire, so the index grows at its right edge
                       CASE WHEN emit = 'upsert' THEN
                           format(', UNIQUE NULLS NOT DISTINCT (window_end, %s window_start)',
                                  (SELECT string_agg(format('%I, ', c), '') FROM unnest(key_columns) c))
                       ELSE '' END,
                       -- re-fires update rows in place: room on the page for the
                       -- new version makes the update HOT, pruned without vacuum
                       CASE WHEN emit = 'upsert' AND (allowed_lateness <> '0' OR early) THEN
                           ' WITH (fillfactor = 50)'
                       ELSE '' END);
    ELSE
        res_cols := key_columns || '{window_start, window_end, window_time}'::name[] || agg_names
                    || CASE WHEN early THEN '{fire_count, is_final, pane, fired_at}'
                            ELSE '{fire_count, is_final, fired_at}' END::name[];
        PERFORM windowing._check_existing_table(res_rel, name, 'result table', res_cols,
            key_types || array_fill(format_type(wtype::regtype, -1), ARRAY[3]) || agg_types
            || CASE WHEN early THEN '{integer, boolean, text, timestamp with time zone}'
                    ELSE '{integer, boolean, timestamp with time zone}' END::text[], res_cols);
        IF emit = 'upsert' THEN
            PERFORM windowing._check_upsert_index(res_rel, key_columns);
        END IF;
    END IF;
    IF late_name <> '' AND late_rel IS NULL THEN
        EXECUTE format('CREATE TABLE %I.%I (routed_at timestamptz NOT NULL DEFAULT pg_catalog.now(), '
                       'event_time %s, watermark %s, reason text NOT NULL, missed_windows %s[], '
                       'row_data jsonb NOT NULL, error jsonb)',
                       nsp, late_name, ttype, ttype, late_win);
    ELSIF late_name <> '' THEN
        -- a step leaves routed_at to its default
        PERFORM windowing._check_existing_table(late_rel, name, 'late table',
            '{routed_at, event_time, watermark, reason, missed_windows, row_data, error}',
            ARRAY['timestamp with time zone', format_type(ttype::regtype, -1), format_type(ttype::regtype, -1),
                  'text', format_type((late_win || '[]')::regtype, -1), 'jsonb', 'jsonb'],
            '{event_time, watermark, reason, missed_windows, row_data, error}');
    END IF;

    INSERT INTO windowing.pipeline (name, owner, source, time_column, time_type, key_columns,
        assigner, aggregates, max_out_of_orderness, allowed_lateness, result_table, late_table,
        emit, state, idle_timeout, on_error, "trigger")
    VALUES (name, current_user::regrole, source, time_column, ttype::regtype, key_columns,
        assigner, aggregates, max_out_of_orderness, allowed_lateness,
        format('%I.%I', nsp, res_name)::regclass,
        CASE WHEN late_name <> '' THEN format('%I.%I', nsp, late_name)::regclass END,
        emit, CASE WHEN start THEN 'running' ELSE 'paused' END, idle_timeout, on_error,
        CASE WHEN early THEN "trigger" END)
    RETURNING id INTO new_id;
    IF start THEN
        PERFORM windowing._wake_workers();
    END IF;
    RETURN new_id;
END
$$;

DROP FUNCTION windowing.alter_pipeline(text, interval, interval, interval, boolean, name, name[],
                                      windowing.assigner, text, text);
CREATE FUNCTION windowing.alter_pipeline(
    name                 text,
    max_out_of_orderness interval DEFAULT NULL,
    allowed_lateness     interval DEFAULT NULL,
    idle_timeout         interval DEFAULT NULL,
    no_idle_timeout      boolean  DEFAULT false,
    time_column          name     DEFAULT NULL,
    key_columns          name[]   DEFAULT NULL,
    assigner             windowing.assigner DEFAULT NULL,
    aggregates           text     DEFAULT NULL,
    emit                 text     DEFAULT NULL,
    "trigger"            text     DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p        windowing.pipeline;
    lateness interval;
    fixed    text;
    cleaned  numeric;
    early    boolean;
BEGIN
    PERFORM windowing._check_owner(name);
    IF no_idle_timeout IS NULL OR (no_idle_timeout AND idle_timeout IS NOT NULL) THEN
        RAISE EXCEPTION 'no_idle_timeout must be true or false, and false when idle_timeout is given'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM windowing._check_duration(max_out_of_orderness, 'max_out_of_orderness');
    PERFORM windowing._check_duration(allowed_lateness, 'allowed_lateness');
    PERFORM windowing._check_duration(idle_timeout, 'idle_timeout');
    PERFORM windowing._lock_pipeline(name);
    SELECT * INTO p FROM windowing.pipeline WHERE pipeline.name = alter_pipeline.name;
    fixed := CASE WHEN time_column <> p.time_column OR (time_column IS NOT NULL AND p.time_column IS NULL)
                  THEN 'time column'
                  WHEN key_columns <> p.key_columns THEN 'key columns'
                  WHEN assigner <> p.assigner THEN 'assigner'
                  WHEN aggregates <> p.aggregates THEN 'aggregates'
                  WHEN emit <> p.emit THEN 'emit mode' END;
    IF fixed IS NOT NULL THEN
        RAISE EXCEPTION 'cannot change the % of pipeline "%"', fixed, name
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Its window state and result table are made for the time column, key columns, assigner, aggregates and emit mode it was created with.',
                  HINT = 'Create a new pipeline beside it, or drop it and create it again.';
    END IF;
    -- from one early interval to another: the windows' timers carry on
    early := windowing._check_trigger("trigger", p.assigner, p.time_type);
    IF "trigger" IS NOT NULL AND early <> (p."trigger" IS NOT NULL) THEN
        RAISE EXCEPTION 'cannot change pipeline "%" between firing at the watermark only and firing early', name
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'A trigger that fires early keeps a timer with each window''s state, and its result table has a pane column.',
                  HINT = 'Create a new pipeline beside it with the other trigger, then drop this one.';
    END IF;
    lateness := coalesce(allowed_lateness, p.allowed_lateness);
    IF lateness < p.allowed_lateness THEN
        RAISE EXCEPTION 'cannot lower the allowed lateness of pipeline "%"', name
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = format('Windows fired and kept alive for %s more would end without their final result.',
                                  p.allowed_lateness),
                  HINT = 'Create a new pipeline beside it with the lower lateness, then drop this one.';
    END IF;
    -- the windows cleaned up by now: their last instant plus the old lateness is at the watermark
    IF lateness > p.allowed_lateness AND p.watermark IS NOT NULL THEN
        cleaned := p.watermark - trunc(extract(epoch FROM p.allowed_lateness) * 1000000
                   / CASE WHEN p.time_type = 'bigint'::regtype THEN 1000 ELSE 1 END);
        p.cleaned_until := greatest(p.cleaned_until, greatest(cleaned, -9223372036854775808)::bigint);
    END IF;
    UPDATE windowing.pipeline
    SET max_out_of_orderness = coalesce(alter_pipeline.max_out_of_orderness, p.max_out_of_orderness),
        allowed_lateness = lateness,
        idle_timeout = CASE WHEN no_idle_timeout THEN NULL
                            ELSE coalesce(alter_pipeline.idle_timeout, p.idle_timeout) END,
        cleaned_until = p.cleaned_until,
        "trigger" = CASE WHEN alter_pipeline."trigger" IS NULL THEN p."trigger"
                         WHEN early THEN alter_pipeline."trigger" END
    WHERE id = p.id;
    -- as create_pipeline makes them: room for re-fires' updates once windows outlive their firing
    IF p.emit = 'upsert' AND p.allowed_lateness = '0' AND lateness > '0'
       AND EXISTS (SELECT FROM pg_class WHERE oid = p.result_table) THEN
        EXECUTE format('ALTER TABLE %s SET (fillfactor = 50)', p.result_table);
    END IF;
END
$$;

CREATE OR REPLACE VIEW windowing.pipelines AS
SELECT name, owner, state, source, time_column, key_columns, assigner, aggregates,
       max_out_of_orderness, allowed_lateness, result_table, late_table, emit,
       'windowing_' OPERATOR(pg_catalog.||) id AS channel, created_at,
       windowing.describe(assigner) AS assigner_text,
       coalesce("trigger", 'event time') AS "trigger"
FROM windowing.pipeline;

COMMENT ON FUNCTION windowing.create_pipeline(text, regclass, name, name[], windowing.assigner, text,
                                              interval, interval, name, name, text, boolean, interval,
                                              text, text, text) IS
    'create a pipeline: aggregates of a queue''s rows per key and window, written to a result table; returns its id';
COMMENT ON FUNCTION windowing.alter_pipeline(text, interval, interval, interval, boolean, name, name[],
                                             windowing.assigner, text, text, text) IS
    'change a pipeline''s out-of-orderness, allowed lateness, idle timeout or early firing interval, from its next step';
