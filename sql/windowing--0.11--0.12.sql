-- windowing 0.11 -> 0.12

/* ---- Join pipelines: two queues, one step ------------------------------- */

-- A join pipeline is a row of windowing.pipeline like any other (its owner,
-- state, failures and counters), whose source, time column and keys are its
-- left input's; it has no assigner, and its aggregates are the select list
-- of its results.  join_type says it is one.
ALTER TABLE windowing.pipeline ALTER COLUMN assigner DROP NOT NULL;
ALTER TABLE windowing.pipeline
    -- an interval join: a left row at t meets the right rows of its key
    -- whose time is within [t + join_lower, t + join_upper]
    ADD COLUMN join_type text CHECK (join_type IN ('inner', 'left', 'right', 'full')),
    ADD COLUMN join_lower interval,
    ADD COLUMN join_upper interval,
    ADD COLUMN join_lower_exclusive boolean,
    ADD COLUMN join_upper_exclusive boolean,
    ADD CONSTRAINT pipeline_join_check CHECK ((join_type IS NULL) = (join_lower IS NULL)
        AND (join_type IS NULL) = (join_upper IS NULL)
        AND (join_type IS NULL) = (join_lower_exclusive IS NULL)
        AND (join_type IS NULL) = (join_upper_exclusive IS NULL)
        AND (join_type IS NOT NULL OR assigner IS DISTINCT FROM NULL));
GRANT INSERT (join_type, join_lower, join_upper, join_lower_exclusive, join_upper_exclusive)
    ON windowing.pipeline TO PUBLIC;

-- Each input of a join pipeline: its queue, time column and keys, the table
-- of its rows kept for matching (state_table), and its own cursor and
-- watermark.  A step reads a whole tick of each input (tick.c's snapshots,
-- scan_from as for pipelines); times are in the time column's unit.
CREATE TABLE windowing.join_input (
    pipeline_id   int NOT NULL REFERENCES windowing.pipeline (id) ON DELETE CASCADE,
    side          text NOT NULL CHECK (side IN ('left', 'right')),
    source        regclass NOT NULL,
    alias         name NOT NULL,
    time_column   name NOT NULL,
    key_columns   name[] NOT NULL,
    state_table   regclass NOT NULL,
    tick_lo       pg_snapshot,
    scan_from     bigint NOT NULL DEFAULT 0,
    scan_next     bigint,
    scan_next_xid xid8,
    watermark     bigint,
    max_seen      bigint,
    last_row_at   timestamptz,
    rows_consumed bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (pipeline_id, side)
);
SELECT pg_catalog.pg_extension_config_dump('windowing.join_input', '');
ALTER TABLE windowing.join_input ENABLE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON windowing.join_input
    USING (EXISTS (SELECT 1 FROM windowing.pipeline p
                   WHERE p.id OPERATOR(pg_catalog.=) pipeline_id));
-- as for windowing.pipeline: an input names a queue its owner may read and
-- a state table it owns
CREATE POLICY own_tables ON windowing.join_input AS RESTRICTIVE FOR INSERT
    WITH CHECK (pg_catalog.has_table_privilege(source, 'SELECT')
                AND pg_catalog.pg_has_role((SELECT c.relowner FROM pg_catalog.pg_class c
                                            WHERE c.oid OPERATOR(pg_catalog.=) state_table), 'USAGE'));
GRANT SELECT, INSERT (pipeline_id, side, source, alias, time_column, key_columns, state_table)
    ON windowing.join_input TO PUBLIC;
GRANT UPDATE (tick_lo, scan_from, scan_next, scan_next_xid, watermark, max_seen, last_row_at,
              rows_consumed)
    ON windowing.join_input TO PUBLIC;

-- Every cursor on a queue: each pipeline's, each join input's.
CREATE FUNCTION windowing._queue_cursors(queue regclass)
RETURNS TABLE (pipeline_id int, name text, state text, tick_lo pg_snapshot, tick_hi pg_snapshot)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
AS $$
SELECT p.id, p.name, p.state, p.tick_lo, p.tick_hi
FROM windowing.pipeline p
WHERE p.source = queue AND p.join_type IS NULL
UNION ALL
SELECT p.id, p.name, p.state, i.tick_lo, NULL
FROM windowing.join_input i JOIN windowing.pipeline p ON p.id = i.pipeline_id
WHERE i.source = queue
$$;

-- A join bound as a fixed span: Flink's bounds are milliseconds, so a day is
-- 24 hours here whatever the time zone does.  Unlike a duration, it may be
-- negative.
CREATE FUNCTION windowing._check_join_bound(d interval, what text) RETURNS void
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF d IS NULL THEN
        RAISE EXCEPTION '% must not be NULL', what USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM windowing._check_duration(CASE WHEN d < interval '0' THEN -d ELSE d END, what);
END
$$;

-- The checks of one input of a join: a table the caller reads, made a queue
-- if retention says so, with a time column of the join's type and keys.
CREATE FUNCTION windowing._check_join_input(source regclass, time_column name, key_columns name[],
                                            retention text, side text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    kept  text := windowing._queue_retention(source);
    ttype text;
    k     name;
BEGIN
    IF (SELECT relkind FROM pg_class WHERE oid = source) NOT IN ('r', 'p') THEN
        RAISE EXCEPTION '"%" is not a table', source USING ERRCODE = 'wrong_object_type';
    END IF;
    IF NOT has_table_privilege(source, 'SELECT') THEN
        RAISE EXCEPTION 'permission denied for table %', source
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'A pipeline reads its sources with the rights of its owner.';
    END IF;
    IF time_column IS NULL THEN
        RAISE EXCEPTION 'a join pipeline needs the time column of its % input', side
            USING ERRCODE = 'null_value_not_allowed',
                  DETAIL = 'Joins match rows by event time; processing time is not supported.';
    END IF;
    ttype := windowing._column_type(source, time_column);
    IF ttype IS NULL THEN
        RAISE EXCEPTION 'column "%" of % does not exist', time_column, source
            USING ERRCODE = 'undefined_column';
    END IF;
    IF ttype NOT IN ('timestamp with time zone', 'timestamp without time zone', 'bigint') THEN
        RAISE EXCEPTION 'time column "%" of % must be timestamptz, timestamp or bigint, not %',
                        time_column, source, ttype
            USING ERRCODE = 'datatype_mismatch';
    END IF;
    IF key_columns IS NULL OR cardinality(key_columns) = 0 THEN
        RAISE EXCEPTION 'a join pipeline needs key columns on its % input', side
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Rows are joined where their keys are equal.';
    END IF;
    FOREACH k IN ARRAY key_columns LOOP
        IF windowing._column_type(source, k) IS NULL THEN
            RAISE EXCEPTION 'column "%" of % does not exist', k, source
                USING ERRCODE = 'undefined_column';
        END IF;
    END LOOP;
    IF kept IS NULL AND retention IS NULL THEN
        RAISE EXCEPTION 'table % is not a queue', source
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Pass retention => ''keep'' or retention => ''consume'', or create a queue with windowing.create_queue().';
    ELSIF kept IS NULL THEN
        PERFORM windowing._make_queue(source, retention);
        IF retention = 'consume' THEN
            RAISE NOTICE 'rows of table % will be deleted once every pipeline on it has read them', source;
        END IF;
    END IF;
    RETURN ttype;
END
$$;

-- The table of an input's rows kept for matching: the queue's columns and
-- whether each row met a row of the other side.
CREATE FUNCTION windowing._create_join_state(nsp text, tbl text, source regclass,
                                             time_column name, key_columns name[]) RETURNS regclass
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    EXECUTE format('CREATE TABLE %I.%I (LIKE %s, windowing_matched boolean NOT NULL DEFAULT false)',
                   nsp, tbl, source);
    -- a row meets the other side's rows by key and time, and leaves by time
    EXECUTE format('CREATE INDEX ON %I.%I (%s, %I)', nsp, tbl,
                   (SELECT string_agg(format('%I', c), ', ') FROM unnest(key_columns) c), time_column);
    EXECUTE format('CREATE INDEX ON %I.%I (%I)', nsp, tbl, time_column);
    RETURN format('%I.%I', nsp, tbl)::regclass;
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
DECLARE
    new_id    int;
    nsp       text := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                       WHERE c.oid = left_source);
    res_name  text := coalesce(result_table, name || '_results');
    late_name text := coalesce(late_table, name || '_late');
    la        name := coalesce(left_alias, (SELECT relname FROM pg_class WHERE oid = left_source));
    ra        name := coalesce(right_alias, (SELECT relname FROM pg_class WHERE oid = right_source));
    ltype     text;
    rtype     text;
    res_rel   regclass;
    late_rel  regclass;
    lstate    regclass;
    rstate    regclass;
    agg       boolean;
BEGIN
    IF name IS NULL OR name = '' THEN
        RAISE EXCEPTION 'pipeline name must not be empty' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF left_source IS NULL OR right_source IS NULL OR columns IS NULL OR lower_exclusive IS NULL
       OR upper_exclusive IS NULL OR join_type IS NULL OR start IS NULL THEN
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
    PERFORM windowing._check_join_bound(lower, 'lower');
    PERFORM windowing._check_join_bound(upper, 'upper');
    IF lower > upper OR (lower = upper AND (lower_exclusive OR upper_exclusive)) THEN
        RAISE EXCEPTION 'lower bound % is past upper bound %', lower, upper
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'A left row at t meets the right rows from t + lower to t + upper.';
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

    -- the results: the select list over a pair of rows, as the query gives
    -- it; over no rows at all, only an aggregate gives a row
    EXECUTE format('SELECT count(*) > 0 FROM (SELECT %s FROM %s AS %I, %s AS %I WHERE false) s',
                   columns, left_source, la, right_source, ra) INTO agg;
    IF agg THEN
        RAISE EXCEPTION 'the columns of join pipeline "%" must not aggregate', name
            USING ERRCODE = 'grouping_error',
                  DETAIL = 'Each pair of rows gives one result row.',
                  HINT = 'Aggregate the results with a pipeline over the result table, or with a query.';
    END IF;
    IF result_table IS NOT NULL THEN
        res_rel := to_regclass(format('%I.%I', nsp, result_table));
    END IF;
    IF res_rel IS NULL THEN
        EXECUTE format('CREATE TABLE %I.%I AS SELECT %s FROM %s AS %I, %s AS %I WITH NO DATA',
                       nsp, res_name, columns, left_source, la, right_source, ra);
        res_rel := format('%I.%I', nsp, res_name)::regclass;
    ELSE
        -- an existing table takes the select list as INSERT would
        EXECUTE format('INSERT INTO %s SELECT %s FROM %s AS %I, %s AS %I WHERE false',
                       res_rel, columns, left_source, la, right_source, ra);
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
    lstate := windowing._create_join_state(nsp, name || '_left_state', left_source, left_time, left_keys);
    rstate := windowing._create_join_state(nsp, name || '_right_state', right_source, right_time, right_keys);

    INSERT INTO windowing.pipeline (name, owner, source, time_column, time_type, key_columns,
        assigner, aggregates, max_out_of_orderness, allowed_lateness, result_table, late_table,
        emit, state, idle_timeout, join_type, join_lower, join_upper, join_lower_exclusive,
        join_upper_exclusive)
    VALUES (name, current_user::regrole, left_source, left_time, ltype::regtype, left_keys,
        NULL, columns, max_out_of_orderness, '0', res_rel, late_rel, 'append',
        CASE WHEN start THEN 'running' ELSE 'paused' END, idle_timeout,
        join_type, lower, upper, lower_exclusive, upper_exclusive)
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
CREATE OR REPLACE FUNCTION windowing.drop_pipeline(name text, drop_tables boolean DEFAULT false)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p  windowing.pipeline;
    st regclass;
BEGIN
    PERFORM windowing._check_owner(name);
    PERFORM windowing._lock_pipeline(name);
    -- a join's rows kept for matching are its state, not its results
    FOR st IN SELECT i.state_table FROM windowing.join_input i JOIN windowing.pipeline q ON q.id = i.pipeline_id
              WHERE q.name = drop_pipeline.name AND EXISTS (SELECT FROM pg_class WHERE oid = i.state_table) LOOP
        EXECUTE format('DROP TABLE %s', st);
    END LOOP;
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

CREATE OR REPLACE FUNCTION windowing.alter_pipeline_owner(name text, new_owner regrole) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    st regclass;
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
    -- a join's steps write its state tables as the owner
    FOR st IN SELECT i.state_table FROM windowing.join_input i JOIN windowing.pipeline q ON q.id = i.pipeline_id
              WHERE q.name = alter_pipeline_owner.name AND EXISTS (SELECT FROM pg_class WHERE oid = i.state_table) LOOP
        EXECUTE format('ALTER TABLE %s OWNER TO %I', st, new_owner);
    END LOOP;
END
$$;

-- What aggregate pipelines have and join pipelines do not (yet).
CREATE FUNCTION windowing._refuse_join(pipeline_name text, what text) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF EXISTS (SELECT FROM windowing.pipeline p WHERE p.name = pipeline_name AND p.join_type IS NOT NULL) THEN
        RAISE EXCEPTION '% does not apply to join pipeline "%"', what, pipeline_name
            USING ERRCODE = 'feature_not_supported',
                  HINT = 'Drop the join pipeline and create it again with what it should be.';
    END IF;
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
    PERFORM windowing._refuse_join(name, 'alter_pipeline');
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
           AS watermark_from, evictor, fire_spread,
       join_type, join_lower, join_upper, join_lower_exclusive, join_upper_exclusive
FROM windowing.pipeline p;

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
       coalesce(windowing._state_windows(p.id, p.steps), s.windows) AS open_windows,
       m.bytes AS state_memory_bytes,
       CASE WHEN m.bytes OPERATOR(pg_catalog.>) 0 THEN 0 ELSE coalesce(s.bytes, 0) END AS state_spilled_bytes,
       p.steps, p.last_step_at, p.last_row_at, p.failures,
       CASE WHEN e.shown THEN p.last_error END AS last_error,
       p.last_error_at, p.last_error_sqlstate,
       CASE WHEN e.shown THEN p.last_error_detail END AS last_error_detail,
       CASE WHEN e.shown THEN p.last_error_hint END AS last_error_hint,
       p.last_error_seq,
       windowing._state_memory_windows(p.id, p.steps) AS memory_windows,
       coalesce(s.windows, 0) AS heap_windows, p.state_hits, p.state_misses
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

CREATE OR REPLACE VIEW windowing.queues AS
SELECT t.tgrelid::pg_catalog.regclass AS queue, windowing._queue_retention(t.tgrelid) AS retention,
       ARRAY(SELECT p.name FROM windowing.pipeline p
             WHERE (p.source OPERATOR(pg_catalog.=) t.tgrelid AND p.join_type IS NULL)
                OR p.id OPERATOR(pg_catalog.=) ANY (SELECT i.pipeline_id FROM windowing.join_input i
                                                    WHERE i.source OPERATOR(pg_catalog.=) t.tgrelid)
             ORDER BY p.name) AS pipelines
FROM pg_catalog.pg_trigger t
WHERE t.tgname OPERATOR(pg_catalog.=) 'windowing_wake'
  AND t.tgfoid OPERATOR(pg_catalog.=) 'windowing._queue_rows_added()'::pg_catalog.regprocedure;

COMMENT ON FUNCTION windowing.create_join_pipeline(text, regclass, name, name[], regclass, name, name[], text,
                                                   interval, interval, boolean, boolean, text, interval,
                                                   interval, name, name, name, name, boolean, text) IS
    'create a join pipeline over two queues: each left row with the right rows of its key within an interval of its time, written to a result table; returns its id';
COMMENT ON TABLE windowing.join_input IS
    'the two inputs of each join pipeline: queue, time column, keys, state table, cursor and watermark';
