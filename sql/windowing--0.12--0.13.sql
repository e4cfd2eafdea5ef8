-- windowing 0.12 -> 0.13

/* ---- Window joins: the pairs of rows of a key in the same window -------- */

-- A window join pipeline has an assigner and no bounds.
ALTER TABLE windowing.pipeline DROP CONSTRAINT pipeline_join_check;
ALTER TABLE windowing.pipeline
    ADD CONSTRAINT pipeline_join_check CHECK ((join_lower IS NULL) = (join_upper IS NULL)
        AND (join_lower IS NULL) = (join_lower_exclusive IS NULL)
        AND (join_lower IS NULL) = (join_upper_exclusive IS NULL)
        AND (join_type IS NOT NULL OR join_lower IS NULL)
        AND (assigner IS DISTINCT FROM NULL) = (join_lower IS NULL));

-- A join step may read part of a tick (max_rows); the rest waits in it.
ALTER TABLE windowing.join_input
    ADD COLUMN tick_hi pg_snapshot,
    ADD COLUMN last_seq bigint NOT NULL DEFAULT 0;
GRANT UPDATE (tick_hi, last_seq) ON windowing.join_input TO PUBLIC;
CREATE OR REPLACE FUNCTION windowing._queue_cursors(queue regclass)
RETURNS TABLE (pipeline_id int, name text, state text, tick_lo pg_snapshot, tick_hi pg_snapshot)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
AS $$
SELECT p.id, p.name, p.state, p.tick_lo, p.tick_hi
FROM windowing.pipeline p
WHERE p.source = queue AND p.join_type IS NULL
UNION ALL
SELECT p.id, p.name, p.state, i.tick_lo, i.tick_hi
FROM windowing.join_input i JOIN windowing.pipeline p ON p.id = i.pipeline_id
WHERE i.source = queue
$$;

DROP FUNCTION windowing._create_join_state(text, text, regclass, name, name[]);
DROP FUNCTION windowing.create_join_pipeline(text, regclass, name, name[], regclass, name, name[], text,
                                             interval, interval, boolean, boolean, text, interval,
                                             interval, name, name, name, name, boolean, text);

-- The windows an assigner gives each time, as a pipeline's step assigns
-- them (spec.c): a window join keeps a row once for each of its windows.
-- Only those not past their cleanup time (window_end - 1 + lateness, in
-- the time column's unit) at the watermark, if one is given.  A NULL or
-- out-of-range time has none; the assigner is checked either way.
CREATE FUNCTION windowing._windows(assigner windowing.assigner, ts timestamptz,
                                   watermark timestamptz DEFAULT NULL, lateness bigint DEFAULT 0)
RETURNS TABLE (window_start timestamptz, window_end timestamptz)
AS 'MODULE_PATHNAME', 'windowing_assigner_windows'
LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 4;

CREATE FUNCTION windowing._windows(assigner windowing.assigner, ts timestamp,
                                   watermark timestamp DEFAULT NULL, lateness bigint DEFAULT 0)
RETURNS TABLE (window_start timestamp, window_end timestamp)
AS 'MODULE_PATHNAME', 'windowing_assigner_windows'
LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 4;

CREATE FUNCTION windowing._windows(assigner windowing.assigner, ts bigint,
                                   watermark bigint DEFAULT NULL, lateness bigint DEFAULT 0)
RETURNS TABLE (window_start bigint, window_end bigint)
AS 'MODULE_PATHNAME', 'windowing_assigner_windows'
LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 4;

-- The table of an input's rows kept for matching: the queue's columns and,
-- for an interval join (windows NULL), whether each row met a row of the
-- other side; for a window join, a row for each window of each row
-- (windowing_start, windowing_end) and the start of the window it was in
-- when that fired (windowing_fired; a session that merged since has
-- another start).
CREATE FUNCTION windowing._create_join_state(nsp text, tbl text, source regclass,
                                             time_column name, key_columns name[],
                                             time_type text, windows text) RETURNS regclass
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    keys text := (SELECT string_agg(format('%I', c), ', ') FROM unnest(key_columns) c);
BEGIN
    IF windows IS NOT NULL THEN
        EXECUTE format('CREATE TABLE %I.%I (LIKE %s, windowing_start %s NOT NULL, '
                       'windowing_end %s NOT NULL, windowing_fired %s)',
                       nsp, tbl, source, time_type, time_type, time_type);
    END IF;
    IF windows = 'session' THEN
        -- a row's key finds the sessions it may merge with and meet; they
        -- fire and leave by their end
        EXECUTE format('CREATE INDEX ON %I.%I (%s, windowing_start)', nsp, tbl, keys);
        EXECUTE format('CREATE INDEX ON %I.%I (windowing_end)', nsp, tbl);
    ELSIF windows IS NOT NULL THEN
        -- windows fire and leave by their end, and a row meets the other
        -- side's rows of its key in its window: one index serves both
        EXECUTE format('CREATE INDEX ON %I.%I (windowing_end, %s, windowing_start)', nsp, tbl, keys);
    ELSE
        EXECUTE format('CREATE TABLE %I.%I (LIKE %s, windowing_matched boolean NOT NULL DEFAULT false)',
                       nsp, tbl, source);
        -- a row meets the other side's rows by key and time, and leaves by time
        EXECUTE format('CREATE INDEX ON %I.%I (%s, %I)', nsp, tbl, keys, time_column);
        EXECUTE format('CREATE INDEX ON %I.%I (%I)', nsp, tbl, time_column);
    END IF;
    RETURN format('%I.%I', nsp, tbl)::regclass;
END
$$;

-- A join pipeline of either kind: an interval join (lower and upper given,
-- no assigner) or a window join (an assigner, no bounds).  A window join
-- whose select list aggregates writes one row per key and window, updated
-- when the window fires again.
CREATE FUNCTION windowing._create_join(
    name                 text,
    left_source          regclass,
    left_time            name,
    left_keys            name[],
    right_source         regclass,
    right_time           name,
    right_keys           name[],
    columns              text,
    join_type            text,
    max_out_of_orderness interval,
    idle_timeout         interval,
    result_table         name,
    late_table           name,
    left_alias           name,
    right_alias          name,
    start                boolean,
    retention            text,
    lower                interval,
    upper                interval,
    lower_exclusive      boolean,
    upper_exclusive      boolean,
    assigner             windowing.assigner,
    allowed_lateness     interval)
RETURNS int
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    new_id    int;
    nsp       text := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                       WHERE c.oid = left_source);
    res_name  text := coalesce(result_table, name || '_results');
    late_name text := coalesce(late_table, name || '_late');
    la        name := coalesce(left_alias, (SELECT relname FROM pg_class WHERE oid = left_source));
    ra        name := coalesce(right_alias, (SELECT relname FROM pg_class WHERE oid = right_source));
    windowed  boolean := lower IS NULL AND upper IS NULL;
    -- a window join's windows: merging sessions, or fixed by each row's time
    windows   text := CASE WHEN NOT windowed THEN NULL
                           WHEN (assigner).kind = 'session' THEN 'session' ELSE 'fixed' END;
    ltype     text;
    rtype     text;
    -- a window join's results start with the window, and aggregates of
    -- its pairs start with its keys and are grouped by them
    wcols     text := '';
    lkeys     text := (SELECT string_agg(format('%I.%I', la, k), ', ') FROM unnest(left_keys) k);
    grouped   text := '';
    res_rel   regclass;
    late_rel  regclass;
    lstate    regclass;
    rstate    regclass;
    agg       boolean;
BEGIN
    IF name IS NULL OR name = '' THEN
        RAISE EXCEPTION 'pipeline name must not be empty' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF left_source IS NULL OR right_source IS NULL OR columns IS NULL OR join_type IS NULL
       OR start IS NULL OR (NOT windowed AND (lower_exclusive IS NULL OR upper_exclusive IS NULL))
       OR (windowed AND allowed_lateness IS NULL) THEN
        RAISE EXCEPTION 'only max_out_of_orderness, idle_timeout, result_table, late_table, the aliases and retention may be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    IF join_type NOT IN ('inner', 'left', 'right', 'full') THEN
        RAISE EXCEPTION 'join_type must be ''inner'', ''left'', ''right'' or ''full'''
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF windowing._pipeline_owner(name) IS NOT NULL THEN
        RAISE EXCEPTION 'pipeline "%" already exists', name USING ERRCODE = 'duplicate_object';
    END IF;
    IF (result_table IS NULL AND (name || '_results')::name::text <> name || '_results')
       OR (late_table IS NULL AND (name || '_late')::name::text <> name || '_late')
       OR (name || '_right_state')::name::text <> name || '_right_state' THEN
        RAISE EXCEPTION 'pipeline name "%" is too long to name its tables', name
            USING ERRCODE = 'name_too_long',
                  DETAIL = format('"%s_results", "%s_late" and "%s_right_state" must fit in %s bytes.',
                                  name, name, name, current_setting('max_identifier_length')),
                  HINT = 'Use a shorter name.';
    END IF;
    IF la = ra THEN
        RAISE EXCEPTION 'both inputs of join pipeline "%" are named "%"', name, la
            USING ERRCODE = 'duplicate_alias',
                  HINT = 'Pass left_alias and right_alias, the names its columns use for each side.';
    END IF;
    IF windowed THEN
        IF assigner IS NULL THEN
            RAISE EXCEPTION 'a window join pipeline needs an assigner'
                USING ERRCODE = 'null_value_not_allowed',
                      HINT = 'Pass windowing.tumbling(...), hopping(...), cumulating(...) or session(...).';
        END IF;
        IF coalesce((assigner).kind, '') <> ALL ('{tumbling, hopping, cumulating, session}') THEN
            RAISE EXCEPTION 'window join pipelines take tumbling, hopping, cumulating or session windows, not %',
                            coalesce((assigner).kind, 'none')
                USING ERRCODE = 'feature_not_supported',
                      HINT = CASE WHEN (assigner).kind = 'session_dynamic'
                                  THEN 'Use windowing.session(gap): a window join''s sessions have one gap.'
                                  ELSE 'Use windowing.tumbling(...), hopping(...), cumulating(...) or session(...).' END;
        END IF;
        PERFORM windowing._check_duration(allowed_lateness, 'allowed_lateness');
    ELSE
        PERFORM windowing._check_join_bound(lower, 'lower');
        PERFORM windowing._check_join_bound(upper, 'upper');
        IF lower > upper OR (lower = upper AND (lower_exclusive OR upper_exclusive)) THEN
            RAISE EXCEPTION 'lower bound % is past upper bound %', lower, upper
                USING ERRCODE = 'invalid_parameter_value',
                      DETAIL = 'A left row at t meets the right rows from t + lower to t + upper.';
        END IF;
    END IF;
    PERFORM windowing._check_duration(max_out_of_orderness, 'max_out_of_orderness');
    PERFORM windowing._check_duration(idle_timeout, 'idle_timeout');
    ltype := windowing._check_join_input(left_source, left_time, left_keys, retention, 'left');
    rtype := windowing._check_join_input(right_source, right_time, right_keys, retention, 'right');
    IF ltype <> rtype THEN
        RAISE EXCEPTION 'time columns of join pipeline "%" differ in type: % and %', name, ltype, rtype
            USING ERRCODE = 'datatype_mismatch';
    END IF;
    IF cardinality(left_keys) <> cardinality(right_keys) THEN
        RAISE EXCEPTION 'join pipeline "%" has % left keys and % right keys', name,
                        cardinality(left_keys), cardinality(right_keys)
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    FOR i IN 1 .. cardinality(left_keys) LOOP
        IF windowing._column_type(left_source, left_keys[i])
           <> windowing._column_type(right_source, right_keys[i]) THEN
            RAISE EXCEPTION 'key columns "%" and "%" differ in type: % and %', left_keys[i], right_keys[i],
                            windowing._column_type(left_source, left_keys[i]),
                            windowing._column_type(right_source, right_keys[i])
                USING ERRCODE = 'datatype_mismatch';
        END IF;
    END LOOP;
    IF idle_timeout IS NOT NULL AND ltype = 'timestamp without time zone' THEN
        RAISE EXCEPTION 'idle_timeout needs a timestamptz or bigint time column'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'The watermark would follow the clock, which is no local time.';
    END IF;
    IF windowed THEN
        -- the assigner's lengths and zone, checked as a step will take them
        EXECUTE format('SELECT count(*) FROM windowing._windows($1, NULL::%s)', ltype) USING assigner;
        wcols := format('NULL::%s AS window_start, NULL::%s AS window_end, ', ltype, ltype);
    END IF;

    -- the results: the select list over a pair of rows, as the query gives
    -- it; over no rows at all, only an aggregate gives a row
    EXECUTE format('SELECT count(*) > 0 FROM (SELECT %s FROM %s AS %I, %s AS %I WHERE false) s',
                   columns, left_source, la, right_source, ra) INTO agg;
    IF agg AND NOT windowed THEN
        RAISE EXCEPTION 'the columns of join pipeline "%" must not aggregate', name
            USING ERRCODE = 'grouping_error',
                  DETAIL = 'Each pair of rows gives one result row.',
                  HINT = 'Aggregate the results with a pipeline over the result table or with a query, or join in windows with windowing.create_window_join_pipeline(), whose select list may aggregate each window''s pairs.';
    ELSIF agg THEN
        wcols := format('%s, %s', lkeys, wcols);
        grouped := format(' GROUP BY %s', lkeys);
    END IF;
    IF result_table IS NOT NULL THEN
        res_rel := to_regclass(format('%I.%I', nsp, result_table));
    END IF;
    IF res_rel IS NULL THEN
        EXECUTE format('CREATE TABLE %I.%I AS SELECT %s%s FROM %s AS %I, %s AS %I%s WITH NO DATA',
                       nsp, res_name, wcols, columns, left_source, la, right_source, ra, grouped);
        res_rel := format('%I.%I', nsp, res_name)::regclass;
        IF agg THEN
            -- in the order windows fire, so the index grows at its right edge
            EXECUTE format('ALTER TABLE %s ADD UNIQUE NULLS NOT DISTINCT (window_end, %swindow_start)',
                           res_rel, (SELECT string_agg(format('%I, ', k), '') FROM unnest(left_keys) k));
        END IF;
    ELSE
        -- an existing table takes the select list as INSERT would
        EXECUTE format('INSERT INTO %s SELECT %s%s FROM %s AS %I, %s AS %I WHERE false%s',
                       res_rel, wcols, columns, left_source, la, right_source, ra, grouped);
        IF agg THEN
            PERFORM windowing._check_upsert_index(res_rel, left_keys);
        END IF;
    END IF;
    IF late_table <> '' THEN
        late_rel := to_regclass(format('%I.%I', nsp, late_table));
    END IF;
    IF late_name <> '' AND late_rel IS NULL THEN
        EXECUTE format('CREATE TABLE %I.%I (routed_at timestamptz NOT NULL DEFAULT pg_catalog.now(), '
                       'side text NOT NULL, event_time %s, watermark %s, reason text NOT NULL, '
                       'row_data jsonb NOT NULL)', nsp, late_name, ltype, ltype);
        late_rel := format('%I.%I', nsp, late_name)::regclass;
    ELSIF late_name <> '' THEN
        PERFORM windowing._check_existing_table(late_rel, name, 'late table',
            '{routed_at, side, event_time, watermark, reason, row_data}',
            ARRAY['timestamp with time zone', 'text', format_type(ltype::regtype, -1),
                  format_type(ltype::regtype, -1), 'text', 'jsonb'],
            '{side, event_time, watermark, reason, row_data}');
    END IF;
    lstate := windowing._create_join_state(nsp, name || '_left_state', left_source, left_time, left_keys,
                                           ltype, windows);
    rstate := windowing._create_join_state(nsp, name || '_right_state', right_source, right_time, right_keys,
                                           ltype, windows);

    INSERT INTO windowing.pipeline (name, owner, source, time_column, time_type, key_columns,
        assigner, aggregates, max_out_of_orderness, allowed_lateness, result_table, late_table,
        emit, state, idle_timeout, join_type, join_lower, join_upper, join_lower_exclusive,
        join_upper_exclusive)
    VALUES (name, current_user::regrole, left_source, left_time, ltype::regtype, left_keys,
        CASE WHEN windowed THEN assigner END, columns, max_out_of_orderness,
        CASE WHEN windowed THEN allowed_lateness ELSE '0' END, res_rel, late_rel,
        CASE WHEN agg THEN 'upsert' ELSE 'append' END,
        CASE WHEN start THEN 'running' ELSE 'paused' END, idle_timeout,
        join_type, lower, upper, CASE WHEN NOT windowed THEN lower_exclusive END,
        CASE WHEN NOT windowed THEN upper_exclusive END)
    RETURNING id INTO new_id;
    INSERT INTO windowing.join_input (pipeline_id, side, source, alias, time_column, key_columns, state_table)
    VALUES (new_id, 'left', left_source, la, left_time, left_keys, lstate),
           (new_id, 'right', right_source, ra, right_time, right_keys, rstate);
    IF start THEN
        PERFORM windowing._wake_workers();
    END IF;
    RETURN new_id;
END
$$;

CREATE FUNCTION windowing.create_join_pipeline(
    name                 text,
    left_source          regclass,
    left_time            name,
    left_keys            name[],
    right_source         regclass,
    right_time           name,
    right_keys           name[],
    columns              text,
    lower                interval,
    upper                interval,
    lower_exclusive      boolean  DEFAULT false,
    upper_exclusive      boolean  DEFAULT false,
    join_type            text     DEFAULT 'inner',
    max_out_of_orderness interval DEFAULT '0',
    idle_timeout         interval DEFAULT NULL,
    result_table         name     DEFAULT NULL,
    late_table           name     DEFAULT NULL,
    left_alias           name     DEFAULT NULL,
    right_alias          name     DEFAULT NULL,
    start                boolean  DEFAULT true,
    retention            text     DEFAULT NULL)
RETURNS int
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- bounds NULL would make it a window join
    PERFORM windowing._check_join_bound(lower, 'lower');
    PERFORM windowing._check_join_bound(upper, 'upper');
    RETURN windowing._create_join(name, left_source, left_time, left_keys, right_source, right_time,
        right_keys, columns, join_type, max_out_of_orderness, idle_timeout, result_table, late_table,
        left_alias, right_alias, start, retention, lower, upper, lower_exclusive, upper_exclusive,
        NULL, NULL);
END
$$;

CREATE FUNCTION windowing.create_window_join_pipeline(
    name                 text,
    left_source          regclass,
    left_time            name,
    left_keys            name[],
    right_source         regclass,
    right_time           name,
    right_keys           name[],
    columns              text,
    assigner             windowing.assigner,
    join_type            text     DEFAULT 'inner',
    max_out_of_orderness interval DEFAULT '0',
    allowed_lateness     interval DEFAULT '0',
    idle_timeout         interval DEFAULT NULL,
    result_table         name     DEFAULT NULL,
    late_table           name     DEFAULT NULL,
    left_alias           name     DEFAULT NULL,
    right_alias          name     DEFAULT NULL,
    start                boolean  DEFAULT true,
    retention            text     DEFAULT NULL)
RETURNS int
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN windowing._create_join(name, left_source, left_time, left_keys, right_source, right_time,
        right_keys, columns, join_type, max_out_of_orderness, idle_timeout, result_table, late_table,
        left_alias, right_alias, start, retention, NULL, NULL, NULL, NULL,
        assigner, allowed_lateness);
END
$$;

COMMENT ON FUNCTION windowing.create_join_pipeline(text, regclass, name, name[], regclass, name, name[], text,
                                                   interval, interval, boolean, boolean, text, interval,
                                                   interval, name, name, name, name, boolean, text) IS
    'create a join pipeline over two queues: each left row with the right rows of its key within an interval of its time, written to a result table; returns its id';
COMMENT ON FUNCTION windowing.create_window_join_pipeline(text, regclass, name, name[], regclass, name, name[],
                                                          text, windowing.assigner, text, interval, interval,
                                                          interval, name, name, name, name, boolean, text) IS
    'create a window join pipeline over two queues: the pairs of rows of a key in the same window, written when the window fires; returns its id';

/* ---- pipeline_stats of join pipelines ------------------------------------ */

-- A join keeps no windows in memory or in window_state: its open_windows
-- and heap_windows are NULL, and its state_spilled_bytes the size of its
-- state tables.
CREATE OR REPLACE VIEW windowing.pipeline_stats AS
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
       CASE WHEN p.join_type IS NULL
            THEN windowing._backlog_rows(p.source, p.tick_lo, p.tick_hi, p.last_seq, p.scan_from)
            ELSE (SELECT pg_catalog.sum(windowing._backlog_rows(i.source, i.tick_lo, NULL, i.scan_from,
                                                                i.scan_from))::bigint
                  FROM windowing.join_input i WHERE i.pipeline_id OPERATOR(pg_catalog.=) p.id)
       END AS backlog_rows,
       p.rows_consumed, p.windows_fired, p.late_routed, p.late_dropped,
       CASE WHEN p.join_type IS NULL
            THEN coalesce(windowing._state_windows(p.id, p.steps), s.windows) END AS open_windows,
       m.bytes AS state_memory_bytes,
       CASE WHEN p.join_type IS NOT NULL THEN coalesce(j.bytes, 0)
            WHEN m.bytes OPERATOR(pg_catalog.>) 0 THEN 0 ELSE coalesce(s.bytes, 0) END AS state_spilled_bytes,
       p.steps, p.last_step_at, p.last_row_at, p.failures,
       CASE WHEN e.shown THEN p.last_error END AS last_error,
       p.last_error_at, p.last_error_sqlstate,
       CASE WHEN e.shown THEN p.last_error_detail END AS last_error_detail,
       CASE WHEN e.shown THEN p.last_error_hint END AS last_error_hint,
       p.last_error_seq,
       windowing._state_memory_windows(p.id, p.steps) AS memory_windows,
       CASE WHEN p.join_type IS NULL THEN coalesce(s.windows, 0) END AS heap_windows,
       p.state_hits, p.state_misses
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
CROSS JOIN LATERAL (SELECT windowing._state_memory_bytes(p.id, p.steps) AS bytes) m
-- a join's state is the rows its state tables keep
LEFT JOIN LATERAL (SELECT pg_catalog.sum(pg_catalog.pg_total_relation_size(i.state_table))::bigint AS bytes
                   FROM windowing.join_input i
                   WHERE i.pipeline_id OPERATOR(pg_catalog.=) p.id) j ON true;

/* ---- alter_pipeline of join pipelines -------------------------------------- */

DROP FUNCTION windowing._refuse_join(text, text);
-- alter_pipeline(name, ...) of a join pipeline: its watermark settings
-- may change ("changes": anything else is asked for too); its inputs,
-- windows and select list stay as they were made.
CREATE FUNCTION windowing._check_join_alter(pipeline_name text, changes boolean) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF changes AND EXISTS (SELECT FROM windowing.pipeline p WHERE p.name = pipeline_name
                                                            AND p.join_type IS NOT NULL) THEN
        RAISE EXCEPTION 'alter_pipeline changes only the max_out_of_orderness and idle_timeout of join pipeline "%"',
                        pipeline_name
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Drop the join pipeline and create it again with what it should be.';
    END IF;
END
$$;

-- A join's watermark settings may change; the rest stays as it was made.
CREATE OR REPLACE FUNCTION windowing.alter_pipeline(
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
    purges   boolean;
BEGIN
    PERFORM windowing._check_owner(name);
    PERFORM windowing._check_join_alter(name, num_nonnulls(allowed_lateness, time_column, key_columns, assigner, aggregates, emit, "trigger") > 0);
    IF no_idle_timeout IS NULL OR (no_idle_timeout AND idle_timeout IS NOT NULL) THEN
        RAISE EXCEPTION 'no_idle_timeout must be true or false, and false when idle_timeout is given'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM windowing._check_duration(max_out_of_orderness, 'max_out_of_orderness');
    PERFORM windowing._check_duration(allowed_lateness, 'allowed_lateness');
    PERFORM windowing._check_duration(idle_timeout, 'idle_timeout');
    PERFORM windowing._lock_pipeline(name);
    SELECT * INTO p FROM windowing.pipeline WHERE pipeline.name = alter_pipeline.name;
    -- as create_pipeline: the clock is an instant, a timestamp column's zone unknown
    IF alter_pipeline.idle_timeout IS NOT NULL AND p.time_type = 'timestamp'::regtype THEN
        RAISE EXCEPTION 'idle_timeout needs a timestamptz or bigint time column'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'The watermark would follow the clock, which is no local time.';
    END IF;
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
    IF "trigger" IS NOT NULL THEN
        early := windowing._check_trigger("trigger", p.assigner, p.time_type);
        purges := windowing._trigger_purges("trigger", p.assigner, p.time_type);
        PERFORM windowing._check_trigger_input(p.source, "trigger", p.assigner, p.time_type);
    END IF;
    IF "trigger" IS NOT NULL AND early <> windowing._check_trigger(p."trigger", p.assigner, p.time_type) THEN
        RAISE EXCEPTION 'cannot change pipeline "%" between firing at the watermark only and firing early', name
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'A trigger that fires early keeps a timer with each window''s state, and its result table has a pane column.',
                  HINT = 'Create a new pipeline beside it with the other trigger, then drop this one.';
    END IF;
    IF "trigger" IS NOT NULL AND purges <> windowing._trigger_purges(p."trigger", p.assigner, p.time_type) THEN
        RAISE EXCEPTION 'cannot change pipeline "%" between purging its windows as they fire and keeping their rows', name
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'The windows'' states hold the rows since their last firing, or all their rows.',
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
                         WHEN early OR purges THEN alter_pipeline."trigger" END
    WHERE id = p.id;
    -- as create_pipeline makes them: room for re-fires' updates once windows outlive their firing
    IF p.emit = 'upsert' AND p.allowed_lateness = '0' AND lateness > '0'
       AND EXISTS (SELECT FROM pg_class WHERE oid = p.result_table) THEN
        EXECUTE format('ALTER TABLE %s SET (fillfactor = 50)', p.result_table);
    END IF;
END
$$;
