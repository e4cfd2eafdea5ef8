-- windowing 0.8 -> 0.9
/*
 * Rebuild and backfill: a pipeline's results made again from the rows its
 * queue holds, replayed in order of event time; a view of rebuilds under
 * way.  Derived result columns need no change to the catalog.
 */
ALTER TABLE windowing.pipeline
    ADD COLUMN replay_until pg_snapshot,
    ADD COLUMN replay_done bigint NOT NULL DEFAULT 0,
    ADD COLUMN replay_rows bigint,
    ADD COLUMN replay_started_at timestamptz;
GRANT UPDATE (replay_until, replay_done, replay_rows, replay_started_at)
    ON windowing.pipeline TO PUBLIC;

-- A rebuild's order of replay: the arrival numbers of the rows to replay,
-- numbered in order of event time, sorted once by rebuild() so that each
-- step reads its rows through indexes.  Written by the pipeline's owner
-- (rebuild and steps run as the owner): a row names only a row of a queue
-- the owner reads, for the owner's own pipeline.
CREATE TABLE windowing.replay_order (
    pipeline_id int NOT NULL REFERENCES windowing.pipeline (id) ON DELETE CASCADE,
    ord         bigint NOT NULL,
    seq         bigint NOT NULL,
    PRIMARY KEY (pipeline_id, ord)
);
SELECT pg_catalog.pg_extension_config_dump('windowing.replay_order', '');
ALTER TABLE windowing.replay_order ENABLE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON windowing.replay_order
    USING (EXISTS (SELECT 1 FROM windowing.pipeline p
                   WHERE p.id OPERATOR(pg_catalog.=) pipeline_id));
GRANT SELECT, INSERT, DELETE ON windowing.replay_order TO PUBLIC;
COMMENT ON TABLE windowing.replay_order IS
    'rows of the queues of pipelines being rebuilt, in the order of their replay';

-- rebuild(name): the pipeline's results made again from the rows its queue
-- holds, read in order of event time by its next steps (pipeline.c);
-- backfill(name, history): history's rows into the queue, then a rebuild.
CREATE FUNCTION windowing._rebuild(pipeline_name text) RETURNS bigint
AS 'MODULE_PATHNAME', 'windowing_rebuild' LANGUAGE C STRICT;

CREATE FUNCTION windowing.rebuild(name text) RETURNS bigint
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    rows bigint := windowing._rebuild(name);
BEGIN
    PERFORM windowing._wake_workers();
    RETURN rows;
END
$$;

CREATE FUNCTION windowing.backfill(name text, history regclass) RETURNS bigint
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p       windowing.pipeline;
    columns text;
    missing name;
    added   bigint;
BEGIN
    PERFORM windowing._check_owner(name);
    SELECT * INTO p FROM windowing.pipeline WHERE pipeline.name = backfill.name;
    SELECT string_agg(quote_ident(q.attname), ', ' ORDER BY q.attnum) FILTER (WHERE h.attname IS NOT NULL),
           min(q.attname) FILTER (WHERE h.attname IS NULL AND q.attname = p.time_column)
    INTO columns, missing
    FROM pg_attribute q
    LEFT JOIN pg_attribute h ON h.attrelid = history AND h.attname = q.attname
                            AND h.attnum > 0 AND NOT h.attisdropped
    WHERE q.attrelid = p.source AND q.attnum > 0 AND NOT q.attisdropped
      AND q.attname NOT IN ('windowing_xid', 'windowing_seq');
    IF missing IS NOT NULL OR p.time_column IS NULL THEN
        RAISE EXCEPTION 'cannot backfill pipeline "%" from "%": it has no column "%"',
                        name, history, coalesce(missing, p.time_column)
            USING ERRCODE = 'undefined_column',
                  HINT = 'History is read by the names of the queue''s columns, the time column among them; processing-time pipelines cannot be backfilled.';
    END IF;
    EXECUTE format('INSERT INTO %s (%s) SELECT %s FROM %s', p.source, columns, columns, history);
    GET DIAGNOSTICS added = ROW_COUNT;
    PERFORM windowing.rebuild(name);
    RETURN added;
END
$$;

-- Rebuilds under way, as pg_stat_progress_* views show commands: the rows
-- to replay, those replayed (by committed steps) and the windows fired,
-- shown to those who may see the pipeline's stats.
CREATE VIEW windowing.rebuild_progress AS
SELECT p.name, p.replay_started_at AS started_at, p.replay_rows AS rows_total,
       p.replay_done AS rows_done,
       pg_catalog.round(100.0 OPERATOR(pg_catalog.*) p.replay_done
                        OPERATOR(pg_catalog./) NULLIF(p.replay_rows, 0), 1) AS percent_done,
       p.windows_fired, p.late_routed OPERATOR(pg_catalog.+) p.late_dropped AS late_rows,
       CASE p.time_type
            WHEN 'pg_catalog.timestamptz'::pg_catalog.regtype THEN windowing._as_timestamptz(p.watermark)::text
            WHEN 'pg_catalog.int8'::pg_catalog.regtype THEN p.watermark::text
            ELSE windowing._as_timestamp(p.watermark)::text END AS watermark
FROM windowing.pipeline p
WHERE p.replay_until IS NOT NULL
  AND (pg_catalog.pg_has_role(p.owner, 'USAGE')
       OR pg_catalog.pg_has_role('pg_read_all_stats'::pg_catalog.name, 'USAGE'));

GRANT SELECT ON windowing.rebuild_progress TO PUBLIC;

COMMENT ON FUNCTION windowing.rebuild(text) IS
    'make a pipeline''s results again from the rows its queue holds, replayed in order of event time by its next steps';
COMMENT ON FUNCTION windowing.backfill(text, regclass) IS
    'add the rows of a history table to a pipeline''s queue, then rebuild the pipeline';
COMMENT ON VIEW windowing.rebuild_progress IS
    'rebuilds under way: rows to replay, rows replayed, windows fired';


-- Flink's maxBy and minBy: the value of the row with the greatest (least)
-- key, the first such row on a tie; rows whose key is NULL are ignored.
-- The state keeps one value and its key; it is internal (its type is the
-- caller's), so it serializes for parallel queries and pipelines.  The
-- final, serialize and deserialize functions serve both aggregates.
CREATE FUNCTION windowing._max_by_trans(internal, anyelement, anycompatible)
RETURNS internal
AS 'MODULE_PATHNAME', 'windowing_max_by_trans'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION windowing._min_by_trans(internal, anyelement, anycompatible)
RETURNS internal
AS 'MODULE_PATHNAME', 'windowing_min_by_trans'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION windowing._max_by_combine(internal, internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'windowing_max_by_combine'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION windowing._min_by_combine(internal, internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'windowing_min_by_combine'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION windowing._max_min_by_final(internal, anyelement, anycompatible)
RETURNS anyelement
AS 'MODULE_PATHNAME', 'windowing_max_min_by_final'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION windowing._max_min_by_serialize(internal)
RETURNS bytea
AS 'MODULE_PATHNAME', 'windowing_max_min_by_serialize'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION windowing._max_min_by_deserialize(bytea, internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'windowing_max_min_by_deserialize'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE AGGREGATE windowing.max_by(value anyelement, by anycompatible) (
    SFUNC = windowing._max_by_trans,
    STYPE = internal,
    FINALFUNC = windowing._max_min_by_final,
    FINALFUNC_EXTRA,
    COMBINEFUNC = windowing._max_by_combine,
    SERIALFUNC = windowing._max_min_by_serialize,
    DESERIALFUNC = windowing._max_min_by_deserialize,
    PARALLEL = SAFE
);

CREATE AGGREGATE windowing.min_by(value anyelement, by anycompatible) (
    SFUNC = windowing._min_by_trans,
    STYPE = internal,
    FINALFUNC = windowing._max_min_by_final,
    FINALFUNC_EXTRA,
    COMBINEFUNC = windowing._min_by_combine,
    SERIALFUNC = windowing._max_min_by_serialize,
    DESERIALFUNC = windowing._max_min_by_deserialize,
    PARALLEL = SAFE
);

COMMENT ON AGGREGATE windowing.max_by(anyelement, anycompatible) IS
    'the value of the row with the greatest key, the first such row on a tie (Flink''s maxBy)';
COMMENT ON AGGREGATE windowing.min_by(anyelement, anycompatible) IS
    'the value of the row with the least key, the first such row on a tie (Flink''s minBy)';

/*
 * Purging triggers ('purging early every ...'): create_pipeline keeps the
 * trigger of a pipeline that purges, and alter_pipeline refuses to change
 * whether it does.
 */
-- Whether a pipeline's trigger clears windows as they fire ('purging ...').
CREATE FUNCTION windowing._trigger_purges("trigger" text, assigner windowing.assigner, time_type regtype)
RETURNS boolean
AS 'MODULE_PATHNAME', 'windowing_trigger_purges'
LANGUAGE C STABLE;

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
        -- 'event time' is the default, stored as NULL
        CASE WHEN early OR windowing._trigger_purges("trigger", assigner, ttype::regtype)
             THEN "trigger" END)
    RETURNING id INTO new_id;
    IF start THEN
        PERFORM windowing._wake_workers();
    END IF;
    RETURN new_id;
END
$$;

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
    IF "trigger" IS NOT NULL THEN
        early := windowing._check_trigger("trigger", p.assigner, p.time_type);
        purges := windowing._trigger_purges("trigger", p.assigner, p.time_type);
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

/* Global windows: windowing.global(), fired by a trigger alone. */
-- Flink's GlobalWindows: one window per key for all of time, fired by its
-- trigger alone (a count of rows, or every so much event time), its
-- contents cleared by purging; the watermark reaches its end at flush().
CREATE FUNCTION windowing.global()
RETURNS windowing.assigner LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ROW('global', NULL, NULL, NULL, NULL, NULL, NULL, NULL)::windowing.assigner;
COMMENT ON FUNCTION windowing.global() IS
    'pipeline assigner of one window per key for all of time, fired by its trigger';

/* Stagger: windowing.stagger(), a tumbling assigner's shift drawn once. */
-- Flink's WindowStagger for tumbling windows: 'aligned' leaves them as
-- they are; 'random' shifts them by a random part of their size, 'natural'
-- by the clock now modulo their size (Flink's: the processing time of the
-- first row).  The shift is drawn once, here, and kept in the assigner's
-- offset, so results stay deterministic and the same in every step.
CREATE FUNCTION windowing.stagger(assigner windowing.assigner, how text)
RETURNS windowing.assigner LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    size_ms numeric;
    shift   numeric;
BEGIN
    IF (assigner).kind IS DISTINCT FROM 'tumbling' THEN
        RAISE EXCEPTION 'only tumbling windows can be staggered'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Flink staggers tumbling windows: their starts move, all by the same shift.';
    END IF;
    IF extract(month FROM (assigner).size) <> 0 OR extract(year FROM (assigner).size) <> 0
       OR (assigner).tz IS NOT NULL THEN
        RAISE EXCEPTION 'calendar windows cannot be staggered'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Stagger windows of a fixed size, without a time zone.';
    END IF;
    -- whole milliseconds, which bigint (millisecond) time columns take too
    size_ms := extract(epoch FROM (assigner).size) * 1000;
    shift := CASE lower(how)
                 WHEN 'aligned' THEN 0
                 WHEN 'random' THEN floor(random() * size_ms)
                 WHEN 'natural' THEN mod(floor(extract(epoch FROM now()) * 1000), size_ms)
             END;
    IF shift IS NULL THEN
        RAISE EXCEPTION 'unknown stagger "%"', how
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use ''aligned'', ''random'' or ''natural''.';
    END IF;
    assigner."offset" := make_interval(secs => mod(extract(epoch FROM (assigner)."offset") * 1000 + shift,
                                                   size_ms) / 1000);
    RETURN assigner;
END
$$;
COMMENT ON FUNCTION windowing.stagger(windowing.assigner, text) IS
    'shift tumbling windows by a random or clock-drawn part of their size, drawn once (Flink''s WindowStagger)';
