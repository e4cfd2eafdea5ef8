-- windowing 0.18 -> 0.19

/* ---- A window join's late rows list the windows they missed ------------- */

-- A hopping or cumulating row late for some of its windows met rows in
-- the others only, and nothing recorded what it missed.  The late tables
-- of window joins made from now on have missed_windows, as an aggregate
-- pipeline's do, and a step writes such a row there, with reason 'late
-- for some windows'; a late table made before has no such column, and a
-- step leaves such rows unrecorded unless the column is added.

-- A join pipeline of either kind: an interval join (lower and upper given,
-- no assigner) or a window join (an assigner, no bounds).  A window join
-- whose select list aggregates writes one row per key and window, updated
-- when the window fires again.
CREATE OR REPLACE FUNCTION windowing._create_join(
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
    late_win  text;
    missed    name[];
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
    -- a window join's late rows list the windows they missed; in a table
    -- of the user's, if it has the column
    late_win := CASE ltype WHEN 'bigint' THEN 'windowing.bigint_window'
                           WHEN 'timestamp without time zone' THEN 'windowing.timestamp_window'
                           ELSE 'windowing.time_window' END;
    IF late_name <> '' AND late_rel IS NULL THEN
        EXECUTE format('CREATE TABLE %I.%I (routed_at timestamptz NOT NULL DEFAULT pg_catalog.now(), '
                       'side text NOT NULL, event_time %s, watermark %s, reason text NOT NULL, '
                       '%srow_data jsonb NOT NULL)', nsp, late_name, ltype, ltype,
                       CASE WHEN windowed THEN format('missed_windows %s[], ', late_win) ELSE '' END);
        late_rel := format('%I.%I', nsp, late_name)::regclass;
    ELSIF late_name <> '' THEN
        missed := CASE WHEN windowed AND EXISTS (SELECT FROM pg_attribute a
                                                 WHERE a.attrelid = late_rel AND NOT a.attisdropped
                                                   AND a.attname = 'missed_windows')
                       THEN '{missed_windows}' ELSE '{}' END;
        PERFORM windowing._check_existing_table(late_rel, name, 'late table',
            '{routed_at, side, event_time, watermark, reason, row_data}' || missed,
            ARRAY['timestamp with time zone', 'text', format_type(ltype::regtype, -1),
                  format_type(ltype::regtype, -1), 'text', 'jsonb']
            || CASE WHEN missed = '{}' THEN '{}' ELSE ARRAY[format_type((late_win || '[]')::regtype, -1)] END,
            '{side, event_time, watermark, reason, row_data}' || missed);
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

/* ---- Only stale input watermarks of a distributed pipeline are deleted --- */

-- The input watermarks of the shards of distributed pipelines, a row per
-- shard, in a Citus reference table: each node writes those of its shards
-- and reads all of them from its own copy, over the connections Citus
-- keeps, instead of asking every node each time.  Made on the
-- coordinator with its first distributed pipeline (or by its worker, for
-- pipelines made before the table was), as a Citus table cannot be a
-- member of the extension; the rows of a pipeline are deleted when a
-- distributed pipeline of that name is made or dropped.  Anyone may call
-- this, so it deletes them only while no distributed pipeline has the
-- name but one the calling transaction made.
CREATE OR REPLACE FUNCTION windowing._shard_progress_reset(pipeline_name text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF to_regclass('windowing.shard_progress') IS NULL THEN
        IF NOT EXISTS (SELECT FROM windowing.distributed_pipeline) THEN
            RETURN;
        END IF;
        CREATE TABLE windowing.shard_progress (
            shard_of        text NOT NULL,
            shard_id        bigint NOT NULL,
            input_watermark bigint,
            last_row_at     timestamptz,
            created_at      timestamptz NOT NULL,
            PRIMARY KEY (shard_of, shard_id)
        );
        COMMENT ON TABLE windowing.shard_progress IS
            'input watermarks of the shards of distributed pipelines, which their nodes exchange';
        PERFORM create_reference_table('windowing.shard_progress');
    END IF;
    IF pipeline_name IS NOT NULL
       AND NOT EXISTS (SELECT FROM windowing.distributed_pipeline d
                       WHERE d.name = pipeline_name AND d.created_at <> now()) THEN
        DELETE FROM windowing.shard_progress p WHERE p.shard_of = pipeline_name;
    END IF;
END
$$;

/* ---- Emptying a queue checks only the rows past its pipelines' scan ----- */

-- The check that every pipeline consumed a queue's rows before it is
-- emptied read the whole queue while producers waited for its lock; the
-- rows up to a cursor's scan_from are consumed by definition, so it now
-- reads only those past the least of them.
DROP FUNCTION windowing._queue_cursors(regclass);

-- Every cursor on a queue: each pipeline's, each join input's.
CREATE FUNCTION windowing._queue_cursors(queue regclass)
RETURNS TABLE (pipeline_id int, name text, state text, tick_lo pg_snapshot, tick_hi pg_snapshot,
               scan_from bigint)
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
AS $$
SELECT p.id, p.name, p.state, p.tick_lo, p.tick_hi, p.scan_from
FROM windowing.pipeline p
WHERE p.source = queue AND p.join_type IS NULL
UNION ALL
SELECT p.id, p.name, p.state, i.tick_lo, i.tick_hi, i.scan_from
FROM windowing.join_input i JOIN windowing.pipeline p ON p.id = i.pipeline_id
WHERE i.source = queue
$$;

/* ---- Window joins tell a row between windows from one out of range ------ */

-- A window join routed a row between hopping windows (size < slide) as
-- out of range, even on time; as an aggregate pipeline, it now drops it,
-- or routes it as 'between windows' once it is late.

-- Whether an assigner can give a time its windows, as a step does: not an
-- infinite time or one whose windows would leave its type's range (a
-- window join routes such a row as out of range).  A time between hopping
-- windows has none, and is in range.
CREATE FUNCTION windowing._in_range(assigner windowing.assigner, ts timestamptz) RETURNS boolean
AS 'MODULE_PATHNAME', 'windowing_assigner_in_range'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION windowing._in_range(assigner windowing.assigner, ts timestamp) RETURNS boolean
AS 'MODULE_PATHNAME', 'windowing_assigner_in_range'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION windowing._in_range(assigner windowing.assigner, ts bigint) RETURNS boolean
AS 'MODULE_PATHNAME', 'windowing_assigner_in_range'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
