-- windowing 0.9 -> 0.10
/*
 * Watermarks from elsewhere than the event times: a column of the queue
 * whose values are the watermark (watermark_column, punctuated
 * watermarks), or the pipeline whose results the queue is (watermark_from,
 * as Flink passes watermarks downstream).  Triggers that fire when a
 * column moves by more than a threshold, whose column create_pipeline and
 * alter_pipeline check.  Evictors (evictor) and firings spread over event
 * time (fire_spread).  Early firing by the clock needs no change to the
 * catalog.
 */
ALTER TABLE windowing.pipeline
    ADD COLUMN watermark_column name,
    ADD COLUMN watermark_from int,
    ADD COLUMN tick_watermark bigint,
    ADD COLUMN evictor text,
    ADD COLUMN fire_spread interval;
GRANT INSERT (watermark_column, watermark_from, evictor, fire_spread) ON windowing.pipeline TO PUBLIC;
GRANT UPDATE (tick_watermark) ON windowing.pipeline TO PUBLIC;

-- Checks fire_spread: tumbling windows (whose windows of a key all end
-- together), fired by the watermark alone (the default trigger).
CREATE FUNCTION windowing._check_fire_spread(fire_spread interval, assigner windowing.assigner,
                                             "trigger" text)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF fire_spread IS NULL THEN
        RETURN;
    END IF;
    PERFORM windowing._check_duration(fire_spread, 'fire_spread');
    IF fire_spread = interval '0' THEN
        RAISE EXCEPTION 'fire_spread must be positive' USING ERRCODE = 'invalid_parameter_value',
            HINT = 'Leave it NULL to fire windows at their end.';
    ELSIF (assigner).kind IS DISTINCT FROM 'tumbling' THEN
        RAISE EXCEPTION 'fire_spread needs tumbling windows'
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Other windows of a key do not end together, or are kept as slices or sessions.';
    ELSIF "trigger" IS NOT NULL AND lower("trigger") <> 'event time' THEN
        RAISE EXCEPTION 'fire_spread needs the default trigger'
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'It holds back the firing on time; a trigger that fires early or purges would fire around it.';
    END IF;
END
$$;

-- Checks an evictor for a pipeline's definition, with the columns it reads.
CREATE FUNCTION windowing._check_evictor(evictor text, source regclass, time_column name,
                                         assigner windowing.assigner, time_type regtype,
                                         aggregates text)
RETURNS void
AS 'MODULE_PATHNAME', 'windowing_check_evictor'
LANGUAGE C STABLE;

-- Checks the column a trigger reads (a delta trigger's input), if any.
CREATE FUNCTION windowing._check_trigger_input(source regclass, "trigger" text,
                                               assigner windowing.assigner, time_type regtype)
RETURNS void
AS 'MODULE_PATHNAME', 'windowing_check_trigger_input'
LANGUAGE C STABLE;

-- Checks where a pipeline's watermark comes from, if not from its rows'
-- event times: a column of the source of the time column's type
-- (punctuated watermarks), or the pipeline whose append-mode result table
-- is the source (watermark_from, as Flink passes a watermark downstream),
-- read by its window_time or window_end, which the upstream watermark
-- bounds.  Either takes the place of max_out_of_orderness.  Returns the
-- upstream pipeline's id.
CREATE FUNCTION windowing._check_watermark(source regclass, time_column name, ttype text,
    assigner windowing.assigner, watermark_column name, watermark_from text,
    max_out_of_orderness interval)
RETURNS int
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wtype text := windowing._column_type(source, watermark_column);
    up    record;
BEGIN
    IF watermark_column IS NULL AND watermark_from IS NULL THEN
        RETURN NULL;
    ELSIF watermark_column IS NOT NULL AND watermark_from IS NOT NULL THEN
        RAISE EXCEPTION 'a pipeline takes its watermark from a column or from another pipeline, not both'
            USING ERRCODE = 'invalid_parameter_value';
    ELSIF time_column IS NULL OR (assigner).kind = 'counting' THEN
        RAISE EXCEPTION 'a watermark from % needs windows of event time',
                        CASE WHEN watermark_column IS NULL THEN 'another pipeline' ELSE 'a column' END
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = CASE WHEN time_column IS NULL
                                THEN 'A pipeline on processing time takes its watermark from the clock.'
                                ELSE 'Count windows fire by their rows, not by a watermark.' END;
    ELSIF max_out_of_orderness IS NOT NULL AND max_out_of_orderness <> '0' THEN
        RAISE EXCEPTION 'max_out_of_orderness has no use with a watermark from %',
                        CASE WHEN watermark_column IS NULL THEN 'another pipeline' ELSE 'a column' END
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'That watermark is the one the pipeline takes, without a delay.';
    END IF;
    IF watermark_column IS NOT NULL THEN
        IF wtype IS NULL THEN
            RAISE EXCEPTION 'column "%" of % does not exist', watermark_column, source
                USING ERRCODE = 'undefined_column';
        ELSIF wtype <> ttype THEN
            RAISE EXCEPTION 'watermark column "%" is %, not % as the time column is', watermark_column, wtype, ttype
                USING ERRCODE = 'datatype_mismatch';
        ELSIF watermark_column = time_column THEN
            RAISE EXCEPTION 'the watermark column must not be the time column'
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Leave watermark_column unset for a watermark that follows the event times.';
        END IF;
        RETURN NULL;
    END IF;
    SELECT p.id, p.result_table, p.emit INTO up FROM windowing.pipeline p
    WHERE p.name = _check_watermark.watermark_from;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'pipeline "%" does not exist', watermark_from USING ERRCODE = 'undefined_object';
    ELSIF up.result_table <> source THEN
        RAISE EXCEPTION 'pipeline "%" does not write into %', watermark_from, source
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = format('Its results go to %s; a pipeline takes the watermark of the pipeline whose results it reads.',
                                  up.result_table);
    ELSIF up.emit <> 'append' THEN
        RAISE EXCEPTION 'pipeline "%" writes its results in upsert mode', watermark_from
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'A firing that updates a result row in place does not reach the pipelines reading its table.',
                  HINT = 'Read the results of a pipeline with emit => ''append''.';
    ELSIF time_column NOT IN ('window_time', 'window_end') THEN
        RAISE EXCEPTION 'a pipeline that takes the watermark of "%" must read its window_time or window_end', watermark_from
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'The upstream watermark says which windows fired: the rows still to come end after it, whatever their start.';
    END IF;
    RETURN up.id;
END
$$;

-- The watermark of pipeline "id" and the transaction that last wrote its
-- row, as of the caller's snapshot, whoever owns it: a pipeline reading
-- its results takes that watermark (watermarks are public, as in
-- pipeline_stats).
CREATE FUNCTION windowing._upstream_watermark(id int, OUT watermark bigint, OUT written xid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$ SELECT p.watermark, p.xmin FROM windowing.pipeline p WHERE p.id = $1 $$;

DROP FUNCTION windowing.create_pipeline(text, regclass, name, name[], windowing.assigner, text,
                                        interval, interval, name, name, text, boolean, interval,
                                        text, text, text);

-- create_pipeline: checks a definition, prepares the queue, makes the
-- result and late tables.  It refuses upsert keys that the result table's
-- unique key would compare otherwise than the pipeline does, and a name
-- too long for the names of its tables (which PostgreSQL would silently
-- truncate).
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
    "trigger"            text     DEFAULT NULL,
    watermark_column     name     DEFAULT NULL,
    watermark_from       text     DEFAULT NULL,
    evictor              text     DEFAULT NULL,
    fire_spread          interval DEFAULT NULL)
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
    upstream  int;
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
    PERFORM windowing._check_trigger_input(source, "trigger", assigner, ttype::regtype);
    PERFORM windowing._check_evictor(evictor, source, time_column, assigner, ttype::regtype, aggregates);
    PERFORM windowing._check_fire_spread(fire_spread, assigner, "trigger");
    -- count windows are numbered by rows
    wtype := CASE WHEN (assigner).kind = 'counting' THEN 'bigint' ELSE ttype END;
    upstream := windowing._check_watermark(source, time_column, ttype, assigner,
                                           watermark_column, watermark_from, max_out_of_orderness);
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
        emit, state, idle_timeout, on_error, "trigger", watermark_column, watermark_from, evictor,
        fire_spread)
    VALUES (name, current_user::regrole, source, time_column, ttype::regtype, key_columns,
        assigner, aggregates,
        -- a watermark taken from elsewhere comes without a delay
        CASE WHEN watermark_column IS NULL AND upstream IS NULL THEN max_out_of_orderness END,
        allowed_lateness,
        format('%I.%I', nsp, res_name)::regclass,
        CASE WHEN late_name <> '' THEN format('%I.%I', nsp, late_name)::regclass END,
        emit, CASE WHEN start THEN 'running' ELSE 'paused' END, idle_timeout, on_error,
        -- 'event time' is the default, stored as NULL
        CASE WHEN early OR windowing._trigger_purges("trigger", assigner, ttype::regtype)
             THEN "trigger" END, watermark_column, upstream, evictor, fire_spread)
    RETURNING id INTO new_id;
    IF start THEN
        PERFORM windowing._wake_workers();
    END IF;
    RETURN new_id;
END
$$;

COMMENT ON FUNCTION windowing.create_pipeline(text, regclass, name, name[], windowing.assigner, text,
                                              interval, interval, name, name, text, boolean, interval,
                                              text, text, text, name, text, text, interval) IS
    'create a pipeline: aggregates of a queue''s rows per key and window, written to a result table; returns its id';

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

CREATE OR REPLACE VIEW windowing.pipelines AS
SELECT name, owner, state, source, time_column, key_columns, assigner, aggregates,
       max_out_of_orderness, allowed_lateness, result_table, late_table, emit,
       'windowing_' OPERATOR(pg_catalog.||) id AS channel, created_at,
       windowing.describe(assigner) AS assigner_text,
       coalesce("trigger", 'event time') AS "trigger", watermark_column,
       (SELECT u.name FROM windowing.pipeline u WHERE u.id OPERATOR(pg_catalog.=) p.watermark_from)
           AS watermark_from, evictor, fire_spread
FROM windowing.pipeline p;
