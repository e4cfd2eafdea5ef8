-- windowing 0.14 -> 0.15

/* ---- Pipelines of several parts ------------------------------------------ */

-- a pipeline stepped as "parallelism" parts, each by its own worker (see
-- windowing--0.15.sql)
ALTER TABLE windowing.pipeline
    ADD COLUMN part int NOT NULL DEFAULT 0,
    ADD COLUMN parallelism int NOT NULL DEFAULT 1;
ALTER TABLE windowing.pipeline
    DROP CONSTRAINT pipeline_name_key,
    ADD CONSTRAINT pipeline_name_key UNIQUE (name, part);


-- The rules a pipeline row keeps.  A trigger on the columns they read, not
-- CHECK constraints: the executor compiles every CHECK constraint of a
-- table at each UPDATE of it, and every step updates its pipeline's row
-- (its cursor and counters), which this trigger skips.
CREATE OR REPLACE FUNCTION windowing._check_pipeline() RETURNS trigger
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
        WHEN p.parallelism NOT BETWEEN 1 AND p.key_groups OR p.part NOT BETWEEN 0 AND p.parallelism - 1
             OR (p.join_type IS NOT NULL AND p.parallelism <> 1)
            THEN 'pipeline_parallelism_check'
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

DROP TRIGGER pipeline_check ON windowing.pipeline;
CREATE TRIGGER pipeline_check
    AFTER INSERT OR UPDATE OF emit, state, on_error, key_groups, join_type, join_lower, join_upper,
                              join_lower_exclusive, join_upper_exclusive, assigner, part, parallelism
    ON windowing.pipeline FOR EACH ROW EXECUTE FUNCTION windowing._check_pipeline();

GRANT INSERT (name, owner, source, time_column, time_type, key_columns, assigner, aggregates,
              max_out_of_orderness, allowed_lateness, result_table, late_table, emit, state,
              idle_timeout, on_error, "trigger", watermark_column, watermark_from, evictor,
              fire_spread, part, parallelism, sliced, key_groups)
    ON windowing.pipeline TO PUBLIC;

GRANT UPDATE (state, tick_lo, tick_hi, last_seq, watermark, max_seen, steps, rows_consumed,
              windows_fired, late_routed, late_dropped, last_step_at, last_row_at, last_error,
              failures, scan_from, scan_next, scan_next_xid, owner, last_error_at,
              max_out_of_orderness, allowed_lateness, idle_timeout, cleaned_until,
              last_error_sqlstate, last_error_detail, last_error_hint, last_error_seq, "trigger",
              state_hits, state_misses, replay_until, replay_done, replay_rows, replay_started_at,
              tick_watermark, parallelism)
    ON windowing.pipeline TO PUBLIC;

-- The watermark of pipeline "id" and the transaction that last wrote its
-- row, as of the caller's snapshot, whoever owns it: a pipeline reading
-- its results takes that watermark (watermarks are public, as in
-- pipeline_stats).  A pipeline of several parts is at the least of their
-- watermarks, and written by the caller's transaction if any part is.
CREATE OR REPLACE FUNCTION windowing._upstream_watermark(id int, OUT watermark bigint, OUT written xid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
SELECT CASE WHEN pg_catalog.count(*) OPERATOR(pg_catalog.=) pg_catalog.count(p.watermark)
            THEN pg_catalog.min(p.watermark) END,
       (pg_catalog.array_agg(p.xmin ORDER BY p.xmin OPERATOR(pg_catalog.=)
                             pg_catalog.xid(pg_catalog.pg_current_xact_id_if_assigned()) DESC NULLS LAST))[1]
FROM windowing.pipeline u JOIN windowing.pipeline p ON p.name OPERATOR(pg_catalog.=) u.name
WHERE u.id OPERATOR(pg_catalog.=) $1
$$;

-- The part of a pipeline of "parallelism" parts that steps key group
-- "key_group" of n: each part a run of consecutive groups.
CREATE FUNCTION windowing._key_part(key_group int, n int, parallelism int) RETURNS int
AS 'MODULE_PATHNAME', 'windowing_key_part' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- The parts of pipeline "id" (its part 0) up to parallelism - 1: copies
-- of part 0's definition, with nothing consumed yet.
CREATE FUNCTION windowing._add_parts(id int, parallelism int) RETURNS void
LANGUAGE sql SET search_path = pg_catalog, pg_temp
AS $$
INSERT INTO windowing.pipeline (name, owner, source, time_column, time_type, key_columns, assigner,
    aggregates, max_out_of_orderness, allowed_lateness, result_table, late_table, emit, state,
    idle_timeout, on_error, "trigger", watermark_column, watermark_from, evictor, fire_spread,
    sliced, key_groups, part, parallelism)
SELECT p.name, p.owner, p.source, p.time_column, p.time_type, p.key_columns, p.assigner,
       p.aggregates, p.max_out_of_orderness, p.allowed_lateness, p.result_table, p.late_table,
       p.emit, p.state, p.idle_timeout, p.on_error, p."trigger", p.watermark_column,
       p.watermark_from, p.evictor, p.fire_spread, p.sliced, p.key_groups, k, $2
FROM windowing.pipeline p, pg_catalog.generate_series(1, $2 OPERATOR(pg_catalog.-) 1) k
WHERE p.id OPERATOR(pg_catalog.=) $1
  AND NOT EXISTS (SELECT FROM windowing.pipeline q
                  WHERE q.name OPERATOR(pg_catalog.=) p.name AND q.part OPERATOR(pg_catalog.=) k)
$$;

-- A pipeline's parts: one for each worker that steps it, each with its own
-- share of the key groups (128), so no more than those.
CREATE FUNCTION windowing._check_parallelism(parallelism int) RETURNS void
LANGUAGE plpgsql IMMUTABLE SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF parallelism IS NULL OR parallelism NOT BETWEEN 1 AND 128 THEN
        RAISE EXCEPTION 'parallelism must be between 1 and 128'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'A pipeline''s keys fall in 128 key groups; each part steps some of them.';
    END IF;
END
$$;

-- Checks where a pipeline's watermark comes from, if not from its rows'
-- event times: a column of the source of the time column's type
-- (punctuated watermarks), or the pipeline whose append-mode result table
-- is the source (watermark_from, as Flink passes a watermark downstream),
-- read by its window_time or window_end, which the upstream watermark
-- bounds.  Either takes the place of max_out_of_orderness.  Returns the
-- upstream pipeline's id.
CREATE OR REPLACE FUNCTION windowing._check_watermark(source regclass, time_column name, ttype text,
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
    WHERE p.name = _check_watermark.watermark_from AND p.part = 0;
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

-- A table of Citus (distributed, reference or local to the coordinator's
-- metadata) holds its rows in shards that a step here would not read.
CREATE FUNCTION windowing._check_not_citus(source regclass) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    citus boolean := false;
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
        EXECUTE 'SELECT EXISTS (SELECT FROM pg_catalog.pg_dist_partition WHERE logicalrelid = $1)'
            INTO citus USING source;
    END IF;
    IF citus THEN
        RAISE EXCEPTION 'table % is a Citus table', source
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'A queue is a plain table of the server its pipelines run on; distributed, reference and Citus local tables are not read yet.',
                  HINT = 'Make a local table the queue.';
    END IF;
END
$$;

-- Makes a table a queue, or changes what becomes of its rows.  Rows get
-- the inserting transaction and an arrival number from the queue's own
-- identity sequence: nothing of the extension's, so that producers' inserts
-- keep working once the extension is dropped.
CREATE OR REPLACE FUNCTION windowing._make_queue(source regclass, retention text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    queue_owner oid := (SELECT c.relowner FROM pg_class c WHERE c.oid = source);
BEGIN
    IF retention IS NULL OR retention NOT IN ('consume', 'keep') THEN
        RAISE EXCEPTION 'retention must be ''consume'' or ''keep'''
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM windowing._check_not_citus(source);
    IF NOT pg_has_role(current_user, queue_owner, 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', source
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Only the owner of a table decides whether its rows are deleted.';
    END IF;
    IF windowing._column_type(source, 'windowing_seq') IS NULL THEN
        EXECUTE format('ALTER TABLE %s ADD COLUMN windowing_xid xid8 NOT NULL '
                       'DEFAULT pg_catalog.pg_current_xact_id(), ADD COLUMN windowing_seq '
                       'bigint NOT NULL GENERATED BY DEFAULT AS IDENTITY', source);
        EXECUTE format('CREATE INDEX ON %s (windowing_seq)', source);
    ELSIF pg_get_serial_sequence(source::text, 'windowing_seq') IS NULL THEN
        RAISE EXCEPTION 'column "windowing_seq" of table % is not an arrival number', source
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'A queue numbers its rows with an identity column of that name.',
                  HINT = 'Rename the column.';
    END IF;
    EXECUTE format('CREATE OR REPLACE TRIGGER windowing_wake AFTER INSERT ON %s '
                   'FOR EACH STATEMENT EXECUTE FUNCTION windowing._queue_rows_added(%L)',
                   source, retention);
END
$$;

DROP FUNCTION windowing.create_pipeline(text, regclass, name, name[], windowing.assigner, text,
                                       interval, interval, name, name, text, boolean, interval,
                                       text, text, text, name, text, text, interval);

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
    fire_spread          interval DEFAULT NULL,
    parallelism          int      DEFAULT 1)
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
    PERFORM windowing._check_parallelism(parallelism);
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
        fire_spread, parallelism)
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
             THEN "trigger" END, watermark_column, upstream, evictor, fire_spread, parallelism)
    RETURNING id INTO new_id;
    PERFORM windowing._add_parts(new_id, parallelism);
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
    FOR p IN DELETE FROM windowing.pipeline WHERE pipeline.name = drop_pipeline.name RETURNING * LOOP
        PERFORM windowing._forget_dropped_state(p.id);
    END LOOP;
    IF drop_tables AND EXISTS (SELECT FROM pg_class WHERE oid = p.result_table) THEN
        EXECUTE format('DROP TABLE %s', p.result_table);
    END IF;
    IF drop_tables AND EXISTS (SELECT FROM pg_class WHERE oid = p.late_table) THEN
        EXECUTE format('DROP TABLE %s', p.late_table);
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION windowing.backfill(name text, history regclass) RETURNS bigint
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p       windowing.pipeline;
    columns text;
    missing name;
    added   bigint;
BEGIN
    PERFORM windowing._check_owner(name);
    SELECT * INTO p FROM windowing.pipeline WHERE pipeline.name = backfill.name AND pipeline.part = 0;
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

-- alter_pipeline(name, parallelism => n): every part reads the queue up to
-- one snapshot, then the parts' state changes hands by key group (parts.c).
CREATE FUNCTION windowing._change_parallelism(pipeline_name text, parallelism int) RETURNS void
AS 'MODULE_PATHNAME', 'windowing_change_parallelism' LANGUAGE C STRICT;

DROP FUNCTION windowing.alter_pipeline(text, interval, interval, interval, boolean, name, name[],
                                      windowing.assigner, text, text, text);

-- alter_pipeline: changes how a pipeline treats time; NULL leaves a
-- setting as it is.  Steps take turns with it, so the next step runs with
-- the new settings.  The watermark never goes back: a larger
-- max_out_of_orderness holds it where it is until the newest event time
-- read has gone far enough ahead.  A larger allowed_lateness keeps windows
-- alive longer from now on, but cannot bring back those already cleaned
-- up, whose state is gone (a row for one would start it anew and replace
-- its result): cleaned_until marks them late for good.  A smaller one is
-- refused: windows fired and kept alive would lose their final result.
-- What the state and the result table were made for stays: the time
-- column, keys, assigner, aggregates and emit mode are parameters only to
-- refuse a change of them clearly.
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
    "trigger"            text     DEFAULT NULL,
    parallelism          int      DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p        windowing.pipeline;
    lateness interval;
    fixed    text;
    old_span numeric;
    early    boolean;
    purges   boolean;
BEGIN
    PERFORM windowing._check_owner(name);
    PERFORM windowing._check_join_alter(name, num_nonnulls(allowed_lateness, time_column, key_columns, assigner, aggregates, emit, "trigger", parallelism) > 0);
    IF parallelism IS NOT NULL THEN
        PERFORM windowing._check_parallelism(parallelism);
    END IF;
    IF no_idle_timeout IS NULL OR (no_idle_timeout AND idle_timeout IS NOT NULL) THEN
        RAISE EXCEPTION 'no_idle_timeout must be true or false, and false when idle_timeout is given'
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM windowing._check_duration(max_out_of_orderness, 'max_out_of_orderness');
    PERFORM windowing._check_duration(allowed_lateness, 'allowed_lateness');
    PERFORM windowing._check_duration(idle_timeout, 'idle_timeout');
    PERFORM windowing._lock_pipeline(name);
    SELECT * INTO p FROM windowing.pipeline WHERE pipeline.name = alter_pipeline.name AND pipeline.part = 0;
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
    -- the parts first, each reading the queue up to now under the settings it had
    IF parallelism IS NOT NULL THEN
        PERFORM windowing._change_parallelism(name, parallelism);
    END IF;
    -- the windows cleaned up by now, in each part: their last instant plus
    -- the old lateness is at its watermark
    old_span := trunc(extract(epoch FROM p.allowed_lateness) * 1000000
                     / CASE WHEN p.time_type = 'bigint'::regtype THEN 1000 ELSE 1 END);
    UPDATE windowing.pipeline
    SET max_out_of_orderness = coalesce(alter_pipeline.max_out_of_orderness, p.max_out_of_orderness),
        allowed_lateness = lateness,
        idle_timeout = CASE WHEN no_idle_timeout THEN NULL
                            ELSE coalesce(alter_pipeline.idle_timeout, p.idle_timeout) END,
        cleaned_until = CASE WHEN lateness > p.allowed_lateness AND pipeline.watermark IS NOT NULL
                             THEN greatest(pipeline.cleaned_until,
                                           greatest(pipeline.watermark - old_span, -9223372036854775808)::bigint)
                             ELSE pipeline.cleaned_until END,
        "trigger" = CASE WHEN alter_pipeline."trigger" IS NULL THEN p."trigger"
                         WHEN early OR purges THEN alter_pipeline."trigger" END
    WHERE pipeline.name = p.name;
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
       join_type, join_lower, join_upper, join_lower_exclusive, join_upper_exclusive, parallelism
FROM windowing.pipeline p
WHERE p.part OPERATOR(pg_catalog.=) 0;

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
-- open_windows counts windows where the state is (the process that steps
-- the pipeline, else the heap), memory_windows and heap_windows each place
-- (window_state lags behind state_log); a join pipeline's are NULL, and
-- its state_spilled_bytes is the size of its state tables;
-- backlog_rows reads the queue as the caller.  A pipeline of parallelism n
-- has a row for each part (0 to n - 1): each its cursor, watermark,
-- counters and state (rows_consumed counts the rows it read, every row of
-- the queue; the windows and late rows are of its own keys).
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
       p.state_hits, p.state_misses, p.part
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

-- Every queue, what becomes of its rows, and the pipelines reading it.
CREATE OR REPLACE VIEW windowing.queues AS
SELECT t.tgrelid::pg_catalog.regclass AS queue, windowing._queue_retention(t.tgrelid) AS retention,
       ARRAY(SELECT p.name FROM windowing.pipeline p
             WHERE (p.source OPERATOR(pg_catalog.=) t.tgrelid AND p.join_type IS NULL
                    AND p.part OPERATOR(pg_catalog.=) 0)
                OR p.id OPERATOR(pg_catalog.=) ANY (SELECT i.pipeline_id FROM windowing.join_input i
                                                    WHERE i.source OPERATOR(pg_catalog.=) t.tgrelid)
             ORDER BY p.name) AS pipelines
FROM pg_catalog.pg_trigger t
WHERE t.tgname OPERATOR(pg_catalog.=) 'windowing_wake'
  AND t.tgfoid OPERATOR(pg_catalog.=) 'windowing._queue_rows_added()'::pg_catalog.regprocedure;

COMMENT ON FUNCTION windowing.create_pipeline(text, regclass, name, name[], windowing.assigner, text,
                                              interval, interval, name, name, text, boolean, interval,
                                              text, text, text, name, text, text, interval, int) IS
    'create a pipeline: aggregates of a queue''s rows per key and window, written to a result table; returns its id';

COMMENT ON FUNCTION windowing.alter_pipeline(text, interval, interval, interval, boolean, name, name[],
                                             windowing.assigner, text, text, text, int) IS
    'change a pipeline''s out-of-orderness, allowed lateness, idle timeout, early firing interval or parallelism, from its next step';

COMMENT ON TABLE windowing.pipeline IS
    'pipelines: definition, cursor and counters (a row per part), written by the extension''s functions';

COMMENT ON VIEW windowing.pipeline_stats IS
    'progress, counters, state size and last error of every pipeline (a row per part), with the row it failed on';
