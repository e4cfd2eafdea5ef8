-- windowing 0.5 -> 0.6
/*
 * Queues are explicit: a table becomes a queue by its owner's choice of
 * what becomes of its rows, 'consume' (deleted once every pipeline on it
 * has read them, as before) or 'keep' (never deleted).  The choice is the
 * argument of the queue's trigger; existing queues are consumed, as they
 * were.  Rows are numbered by each queue's own identity sequence instead of
 * the extension's shared one, so producers' inserts outlive the extension.
 *
 * Sliding and cumulating windows with allowed lateness are kept as
 * slices, as those without it are; pipelines made before keep their state
 * per window.
 *
 * Upsert result tables of pipelines with allowed lateness keep room on
 * each page (fillfactor 50).  A re-fire updates the window's result row:
 * with full pages the new version goes to another page, the index gets a
 * second entry and the old version waits for vacuum; with room on the page
 * the update is HOT and the old version is pruned when the page is next
 * read.  Existing tables get the setting too; it applies to the pages they
 * fill from now on.
 *
 * alter_pipeline() changes a pipeline's max_out_of_orderness,
 * allowed_lateness and idle_timeout.  Each pipeline's row holds the stamp
 * of the definition its state was made for (time column, keys, assigner,
 * aggregates), which its steps check, and the time up to which windows
 * were cleaned up under a smaller allowed lateness.
 *
 * windowing.pipelines shows each assigner as the call that makes it
 * (describe()), and every object users call or read has a comment.
 *
 * pipeline_stats shows the watermark and the newest event time read in the
 * time column's type, lag as event time (the watermark behind the newest
 * event time, where it was the clock less the watermark), the rows waiting
 * in the queue, and when the last error was recorded (a new column of
 * windowing.pipeline).  A view's columns can only be added at its end, so
 * it is made again.
 *
 * The SQL window functions take timestamp (without time zone) too, in its
 * own local time, with windows typed timestamp; so do pipelines, whose
 * late tables' missed windows are then windowing.timestamp_window.
 *
 * create_pipeline() returns the new pipeline's id, and takes on_error:
 * 'route' sends a row whose aggregate input or transition fails to the
 * late table, with the error, and the step goes on.
 */
\echo Use "ALTER EXTENSION windowing UPDATE" to load this file. \quit

DROP FUNCTION windowing._watch_queue(regclass);

-- Pipelines over a timestamp column: its watermark, given or shown.
CREATE FUNCTION windowing._as_timestamp(bigint) RETURNS timestamp
AS 'MODULE_PATHNAME', 'windowing_as_timestamptz' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION windowing.advance_watermark(name text, ts timestamp) RETURNS void
AS 'MODULE_PATHNAME', 'windowing_advance_watermark_timestamp' LANGUAGE C STRICT;

-- Local time: the forms of timestamp (without time zone).  A timestamp's
-- clock is its own, so no zone is given or used: the windows are those of
-- the timestamptz forms in UTC, months on its own calendar included.
CREATE TYPE windowing.timestamp_window AS (
    window_start timestamp,
    window_end   timestamp,
    window_time  timestamp
);

CREATE FUNCTION windowing.tumble(ts timestamp, size interval, "offset" interval DEFAULT '0')
RETURNS windowing.timestamp_window
AS 'MODULE_PATHNAME', 'windowing_tumble_timestamp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION windowing.tumble_start(ts timestamp, size interval, "offset" interval DEFAULT '0')
RETURNS timestamp
AS 'MODULE_PATHNAME', 'windowing_tumble_start_timestamp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION windowing.hop(ts timestamp, size interval, slide interval,
                              "offset" interval DEFAULT '0')
RETURNS SETOF windowing.timestamp_window
AS 'MODULE_PATHNAME', 'windowing_hop_timestamp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 4;

CREATE FUNCTION windowing.hop_start(ts timestamp, size interval, slide interval,
                                    "offset" interval DEFAULT '0')
RETURNS SETOF timestamp
AS 'MODULE_PATHNAME', 'windowing_hop_start_timestamp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 4;

CREATE FUNCTION windowing.cumulate(ts timestamp, step interval, max_size interval,
                                   "offset" interval DEFAULT '0')
RETURNS SETOF windowing.timestamp_window
AS 'MODULE_PATHNAME', 'windowing_cumulate_timestamp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 4;

-- Sessions are fixed time: the timestamptz code serves, typed by the result.
CREATE FUNCTION windowing.session(ts timestamp, gap interval)
RETURNS windowing.timestamp_window
AS 'MODULE_PATHNAME', 'windowing_session'
LANGUAGE C IMMUTABLE WINDOW PARALLEL SAFE;

CREATE FUNCTION windowing.sessions_add(internal, timestamp, interval)
RETURNS internal
AS 'MODULE_PATHNAME', 'windowing_sessions_add'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION windowing.sessions_final(internal, timestamp, interval)
RETURNS windowing.timestamp_window[]
AS 'MODULE_PATHNAME', 'windowing_sessions_final'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE AGGREGATE windowing.sessions(ts timestamp, gap interval) (
    SFUNC = windowing.sessions_add,
    STYPE = internal,
    FINALFUNC = windowing.sessions_final,
    FINALFUNC_EXTRA,
    COMBINEFUNC = windowing.sessions_combine,
    SERIALFUNC = windowing.sessions_serialize,
    DESERIALFUNC = windowing.sessions_deserialize,
    PARALLEL = SAFE
);

-- A queue's trigger wakes the worker when rows are committed, and holds
-- what becomes of the queue's rows: 'consume' (the worker empties the
-- table once every pipeline on it has read them) or 'keep' (never
-- deleted).  The choice lives on the table: it goes when the table goes (a
-- new table that reuses the OID inherits nothing) and pg_dump keeps it.
-- Whoever may create triggers on a table may already run code as its
-- owner, so the trigger's argument is as safe as the owner's word.
CREATE FUNCTION windowing._queue_retention(source regclass) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
AS $$
SELECT pg_catalog.convert_from(pg_catalog.substr(t.tgargs, 1, pg_catalog.length(t.tgargs) OPERATOR(pg_catalog.-) 1), 'UTF8')
FROM pg_catalog.pg_trigger t
WHERE t.tgrelid OPERATOR(pg_catalog.=) $1 AND t.tgname OPERATOR(pg_catalog.=) 'windowing_wake'
  AND t.tgfoid OPERATOR(pg_catalog.=) 'windowing._queue_rows_added()'::pg_catalog.regprocedure
  AND t.tgnargs OPERATOR(pg_catalog.=) 1
$$;

-- Makes a table a queue, or changes what becomes of its rows.  Rows get
-- the inserting transaction and an arrival number from the queue's own
-- identity sequence: nothing of the extension's, so that producers' inserts
-- keep working once the extension is dropped.
CREATE FUNCTION windowing._make_queue(source regclass, retention text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    queue_owner oid := (SELECT c.relowner FROM pg_class c WHERE c.oid = source);
BEGIN
    IF retention IS NULL OR retention NOT IN ('consume', 'keep') THEN
        RAISE EXCEPTION 'retention must be ''consume'' or ''keep'''
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
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

-- create_queue: a new table for producers to insert into and pipelines to
-- read.  "name" and "columns" are SQL, as in CREATE TABLE name (columns):
-- the table goes where CREATE TABLE would put it, and is the caller's.
CREATE FUNCTION windowing.create_queue(name text, columns text, retention text DEFAULT 'consume')
RETURNS regclass
LANGUAGE plpgsql
AS $$
DECLARE
    queue regclass;
BEGIN
    IF name IS NULL OR columns IS NULL THEN
        RAISE EXCEPTION 'name and columns must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    EXECUTE pg_catalog.format('CREATE TABLE %s (%s)', name, columns);
    queue := pg_catalog.to_regclass(name);
    PERFORM windowing._make_queue(queue, retention);
    RETURN queue;
END
$$;

-- alter_queue: makes an existing table a queue, or changes what becomes of
-- a queue's rows.
CREATE FUNCTION windowing.alter_queue(queue regclass, retention text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF queue IS NULL THEN
        RAISE EXCEPTION 'queue must not be NULL' USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM windowing._make_queue(queue, retention);
END
$$;

DROP FUNCTION windowing.create_pipeline(text, regclass, name, name[], windowing.assigner, text,
                                        interval, interval, name, name, text, boolean, interval);
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
    on_error             text     DEFAULT 'stop')
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
    END LOOP;
    -- no time column: processing time, the clock of the step reading a row
    ttype := coalesce(windowing._column_type(source, time_column), 'timestamp with time zone');
    -- count windows are numbered by rows
    wtype := CASE WHEN (assigner).kind = 'counting' THEN 'bigint' ELSE ttype END;
    -- the clock is an instant, and a timestamp column's zone is unknown
    IF idle_timeout IS NOT NULL AND ttype = 'timestamp without time zone' THEN
        RAISE EXCEPTION 'idle_timeout needs a timestamptz or bigint time column'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'The watermark would follow the clock, which is no local time.';
    END IF;
    FOREACH k IN ARRAY key_columns LOOP
        keys := keys || format('%I %s, ', k, windowing._column_type(source, k));
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

    EXECUTE format('CREATE TABLE %I.%I (%s window_start %s NOT NULL, window_end %s NOT NULL, '
                   'window_time %s NOT NULL, %s fire_count int NOT NULL, is_final boolean NOT NULL, '
                   'fired_at timestamptz NOT NULL%s)%s',
                   nsp, res_name, keys, wtype, wtype, wtype, cols,
                   -- in the order windows fire, so the index grows at its right edge
                   CASE WHEN emit = 'upsert' THEN
                       format(', UNIQUE NULLS NOT DISTINCT (window_end, %s window_start)',
                              (SELECT string_agg(format('%I, ', c), '') FROM unnest(key_columns) c))
                   ELSE '' END,
                   -- re-fires update rows in place: room on the page for the
                   -- new version makes the update HOT, pruned without vacuum
                   CASE WHEN emit = 'upsert' AND allowed_lateness <> '0' THEN
                       ' WITH (fillfactor = 50)'
                   ELSE '' END);
    IF late_name <> '' THEN
        EXECUTE format('CREATE TABLE %I.%I (routed_at timestamptz NOT NULL DEFAULT pg_catalog.now(), '
                       'event_time %s, watermark %s, reason text NOT NULL, missed_windows windowing.%s[], '
                       'row_data jsonb NOT NULL, error jsonb)',
                       nsp, late_name, ttype, ttype,
                       CASE ttype WHEN 'bigint' THEN 'bigint_window'
                                  WHEN 'timestamp without time zone' THEN 'timestamp_window'
                                  ELSE 'time_window' END);
    END IF;

    INSERT INTO windowing.pipeline (name, owner, source, time_column, time_type, key_columns,
        assigner, aggregates, max_out_of_orderness, allowed_lateness, result_table, late_table,
        emit, state, idle_timeout, on_error)
    VALUES (name, current_user::regrole, source, time_column, ttype::regtype, key_columns,
        assigner, aggregates, max_out_of_orderness, allowed_lateness,
        format('%I.%I', nsp, res_name)::regclass,
        CASE WHEN late_name <> '' THEN format('%I.%I', nsp, late_name)::regclass END,
        emit, CASE WHEN start THEN 'running' ELSE 'paused' END, idle_timeout, on_error)
    RETURNING id INTO new_id;
    IF start THEN
        PERFORM windowing._wake_workers();
    END IF;
    RETURN new_id;
END
$$;


-- Every queue, what becomes of its rows, and the pipelines reading it.
CREATE VIEW windowing.queues AS
SELECT t.tgrelid::pg_catalog.regclass AS queue, windowing._queue_retention(t.tgrelid) AS retention,
       ARRAY(SELECT p.name FROM windowing.pipeline p
             WHERE p.source OPERATOR(pg_catalog.=) t.tgrelid ORDER BY p.name) AS pipelines
FROM pg_catalog.pg_trigger t
WHERE t.tgname OPERATOR(pg_catalog.=) 'windowing_wake'
  AND t.tgfoid OPERATOR(pg_catalog.=) 'windowing._queue_rows_added()'::pg_catalog.regprocedure;
GRANT SELECT ON windowing.queues TO PUBLIC;

-- Existing queues: consumed, as they were, and numbered by a sequence of
-- their own that goes on from the shared one (under the queue's lock no row
-- is being numbered).
DO $$
DECLARE
    q regclass;
BEGIN
    FOR q IN SELECT DISTINCT d.adrelid FROM pg_catalog.pg_depend dep
             JOIN pg_catalog.pg_attrdef d ON d.oid = dep.objid
             WHERE dep.classid = 'pg_catalog.pg_attrdef'::regclass
               AND dep.refclassid = 'pg_catalog.pg_class'::regclass
               AND dep.refobjid = 'windowing.queue_seq'::regclass LOOP
        EXECUTE format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', q);
        EXECUTE format('ALTER TABLE %s ALTER COLUMN windowing_seq DROP DEFAULT', q);
        EXECUTE format('ALTER TABLE %s ALTER COLUMN windowing_seq ADD GENERATED BY DEFAULT AS IDENTITY '
                       '(START WITH %s)', q,
                       (SELECT coalesce(pg_catalog.pg_sequence_last_value('windowing.queue_seq'), 0) + 1));
        -- made by this script, the sequence would be the extension's, and
        -- dropping the extension would drop the column with it
        EXECUTE format('ALTER EXTENSION windowing DROP SEQUENCE %s',
                       pg_catalog.pg_get_serial_sequence(q::text, 'windowing_seq'));
        EXECUTE format('CREATE OR REPLACE TRIGGER windowing_wake AFTER INSERT ON %s '
                       'FOR EACH STATEMENT EXECUTE FUNCTION windowing._queue_rows_added(''consume'')', q);
    END LOOP;
END
$$;
-- out of the extension first, which also takes it off the list pg_dump dumps
ALTER EXTENSION windowing DROP SEQUENCE windowing.queue_seq;
DROP SEQUENCE windowing.queue_seq;

-- Sliding and cumulating windows with allowed lateness are computed from
-- slices from 0.6 on (slices.c).  Such a pipeline made before keeps its
-- state per window, which is what its stored windows are.
UPDATE windowing.pipeline SET sliced = false
WHERE allowed_lateness OPERATOR(pg_catalog.<>) '0'::pg_catalog.interval;

DO $$
DECLARE
    t regclass;
BEGIN
    -- a result table dropped by hand leaves a stale oid behind
    FOR t IN SELECT c.oid FROM windowing.pipeline p JOIN pg_catalog.pg_class c ON c.oid = p.result_table
             WHERE p.emit = 'upsert' AND p.allowed_lateness <> '0' LOOP
        EXECUTE format('ALTER TABLE %s SET (fillfactor = 50)', t);
    END LOOP;
END
$$;

-- when the worker recorded last_error
ALTER TABLE windowing.pipeline ADD COLUMN last_error_at timestamptz;
GRANT UPDATE (last_error_at) ON windowing.pipeline TO PUBLIC;

-- windows cleaned up under a smaller allowed lateness (alter_pipeline),
-- and the stamp of each pipeline's definition
ALTER TABLE windowing.pipeline ADD COLUMN cleaned_until bigint, ADD COLUMN definition_stamp text;
GRANT UPDATE (max_out_of_orderness, allowed_lateness, idle_timeout, cleaned_until)
    ON windowing.pipeline TO PUBLIC;

-- A pipeline's stored state and result table are made for its time
-- column, key columns, assigner and aggregates.  Each row gets their stamp
-- when it is inserted, and a step whose row no longer matches its stamp
-- refuses to run (pipeline.c): a superuser's UPDATE of the definition
-- would have the state misread.  Intervals are written in one style
-- whatever the session's.
CREATE FUNCTION windowing._definition_stamp(time_column name, time_type regtype, key_columns name[],
                                            assigner windowing.assigner, aggregates text)
RETURNS text
LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp SET IntervalStyle = 'postgres'
AS $$
SELECT pg_catalog.md5(pg_catalog.format('%L %s %L %L %L', time_column, time_type::oid, key_columns,
                                        assigner, aggregates))
$$;

CREATE FUNCTION windowing._stamp_definition() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    NEW.definition_stamp := windowing._definition_stamp(NEW.time_column, NEW.time_type,
                                                        NEW.key_columns, NEW.assigner, NEW.aggregates);
    RETURN NEW;
END
$$;
CREATE TRIGGER definition_stamp BEFORE INSERT ON windowing.pipeline
    FOR EACH ROW EXECUTE FUNCTION windowing._stamp_definition();
UPDATE windowing.pipeline
SET definition_stamp = windowing._definition_stamp(time_column, time_type, key_columns, assigner, aggregates);
ALTER TABLE windowing.pipeline ALTER COLUMN definition_stamp SET NOT NULL;

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
    emit                 text     DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p        windowing.pipeline;
    lateness interval;
    fixed    text;
    cleaned  numeric;
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
        cleaned_until = p.cleaned_until
    WHERE id = p.id;
    -- as create_pipeline makes them: room for re-fires' updates once windows outlive their firing
    IF p.emit = 'upsert' AND p.allowed_lateness = '0' AND lateness > '0'
       AND EXISTS (SELECT FROM pg_class WHERE oid = p.result_table) THEN
        EXECUTE format('ALTER TABLE %s SET (fillfactor = 50)', p.result_table);
    END IF;
END
$$;

-- a row whose aggregate inputs fail: the step fails ('stop'), or the row
-- goes to the late table and the step goes on ('route')
ALTER TABLE windowing.pipeline ADD COLUMN on_error text NOT NULL DEFAULT 'stop'
    CHECK (on_error IN ('stop', 'route'));
GRANT INSERT (on_error) ON windowing.pipeline TO PUBLIC;

CREATE OR REPLACE FUNCTION windowing.resume_pipeline(name text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM windowing._check_owner(name);
    PERFORM windowing._lock_pipeline(name);
    UPDATE windowing.pipeline SET state = 'running', failures = 0, last_error = NULL,
                                  last_error_at = NULL
    WHERE pipeline.name = resume_pipeline.name;
    PERFORM windowing._wake_workers();
END
$$;

-- The rows of a pipeline's queue committed and not yet consumed, from its
-- cursor (pipeline.c): past scan_from, not in tick_lo, and not among the
-- rows of an open tick (in tick_hi) read up to last_seq.  Rows the caller's
-- own transaction inserted are not committed yet, and are left out.  It
-- reads the queue as the caller: NULL where the caller may not read the
-- queue's arrival columns, or would see only some of its rows.
CREATE FUNCTION windowing._backlog_rows(source regclass, tick_lo pg_snapshot, tick_hi pg_snapshot,
                                        last_seq bigint, scan_from bigint) RETURNS bigint
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    -- a queue dropped or changed since: its pipeline's next step says so
    IF windowing._column_type(source, 'windowing_seq') IS DISTINCT FROM 'bigint'
       OR windowing._column_type(source, 'windowing_xid') IS DISTINCT FROM 'xid8' THEN
        RETURN NULL;
    END IF;
    IF NOT (has_column_privilege(source, 'windowing_seq', 'SELECT')
            AND has_column_privilege(source, 'windowing_xid', 'SELECT')) THEN
        RETURN NULL;
    END IF;
    IF row_security_active(source) THEN
        RETURN NULL;
    END IF;
    EXECUTE format('SELECT count(*) FROM %s AS q WHERE q.windowing_seq > $1 '
                   'AND q.windowing_xid IS DISTINCT FROM $2 '
                   'AND NOT coalesce(pg_visible_in_snapshot(q.windowing_xid, $3), false) '
                   'AND NOT (coalesce(pg_visible_in_snapshot(q.windowing_xid, $4), false) '
                   'AND q.windowing_seq <= $5)', source)
        INTO n USING scan_from, pg_current_xact_id_if_assigned(), tick_lo, tick_hi, last_seq;
    RETURN n;
END
$$;

DROP VIEW windowing.pipeline_stats;
-- The view runs as the extension's owner and so shows every pipeline;
-- last_error quotes what PostgreSQL quotes in errors, row data included.
-- Like pg_stat_activity's query, it is shown only to roles with the
-- privileges of the pipeline's owner and to pg_read_all_stats, and is NULL
-- for others, who keep the rest of the row.  Times are shown in the time
-- column's type: watermark_time and max_event_time for timestamptz,
-- watermark_ms and max_event_ms for bigint, neither for timestamp, a local
-- time that is no instant (watermark, as text, for all three).
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
       CASE WHEN pg_catalog.pg_has_role(p.owner, 'USAGE')
                 OR pg_catalog.pg_has_role('pg_read_all_stats'::pg_catalog.name, 'USAGE')
            THEN p.last_error END AS last_error,
       p.last_error_at
FROM windowing.pipeline p
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

-- The call that makes an assigner, as a pipeline's definition would be
-- written: windowing.pipelines shows it.  Optional arguments appear only
-- when they differ from their defaults.  Intervals are written in the
-- session's IntervalStyle, as interval output is: hence STABLE.
CREATE FUNCTION windowing.describe(assigner windowing.assigner)
RETURNS text LANGUAGE sql STABLE STRICT PARALLEL SAFE
RETURN format('%s(%s)', (assigner).kind, concat_ws(', ',
    CASE (assigner).kind
        WHEN 'tumbling' THEN quote_literal((assigner).size)
        WHEN 'hopping' THEN format('%L, %L', (assigner).size, (assigner).slide)
        WHEN 'cumulating' THEN format('%L, %L', (assigner).slide, (assigner).size)
        WHEN 'session' THEN quote_literal((assigner).size)
        WHEN 'session_dynamic' THEN quote_literal((assigner).gap_column)
        WHEN 'counting' THEN (assigner).rows::text
    END,
    CASE WHEN (assigner).rows_slide <> (assigner).rows THEN 'slide => ' || (assigner).rows_slide END,
    CASE WHEN (assigner)."offset" <> '0' THEN '"offset" => ' || quote_literal((assigner)."offset") END,
    CASE WHEN (assigner).tz IS NOT NULL THEN 'tz => ' || quote_literal((assigner).tz) END));

CREATE OR REPLACE VIEW windowing.pipelines AS
SELECT name, owner, state, source, time_column, key_columns, assigner, aggregates,
       max_out_of_orderness, allowed_lateness, result_table, late_table, emit,
       'windowing_' OPERATOR(pg_catalog.||) id AS channel, created_at,
       windowing.describe(assigner) AS assigner_text
FROM windowing.pipeline;

-- What psql's \df+, \da, \dv+, \dt+ and \dT show.  Every object users
-- call or read has one (sql/psql_catalog.sql checks); the internal ones,
-- named with a leading underscore, and the support functions of
-- aggregates have none.
COMMENT ON TYPE windowing.assigner IS
    'how a pipeline assigns rows to windows: made by tumbling(), hopping(), cumulating(), session(), session_dynamic() or counting()';

COMMENT ON FUNCTION windowing.tumble(timestamptz, interval, interval, text) IS
    'the tumbling window of a timestamp';
COMMENT ON FUNCTION windowing.tumble(bigint, bigint, bigint) IS
    'the tumbling window of an epoch integer time';
COMMENT ON FUNCTION windowing.tumble_start(timestamptz, interval, interval, text) IS
    'start of the tumbling window of a timestamp';
COMMENT ON FUNCTION windowing.tumble_start(bigint, bigint, bigint) IS
    'start of the tumbling window of an epoch integer time';
COMMENT ON FUNCTION windowing.hop(timestamptz, interval, interval, interval, text) IS
    'every sliding window holding a timestamp, newest first';
COMMENT ON FUNCTION windowing.hop(bigint, bigint, bigint, bigint) IS
    'every sliding window holding an epoch integer time, newest first';
COMMENT ON FUNCTION windowing.hop_start(timestamptz, interval, interval, interval, text) IS
    'start of every sliding window holding a timestamp';
COMMENT ON FUNCTION windowing.hop_start(bigint, bigint, bigint, bigint) IS
    'start of every sliding window holding an epoch integer time';
COMMENT ON FUNCTION windowing.cumulate(timestamptz, interval, interval, interval, text) IS
    'every cumulating window holding a timestamp';
COMMENT ON FUNCTION windowing.cumulate(bigint, bigint, bigint, bigint) IS
    'every cumulating window holding an epoch integer time';
COMMENT ON FUNCTION windowing.session(timestamptz, interval) IS
    'the merged session window of each row of a partition ordered by time';
COMMENT ON FUNCTION windowing.session(bigint, bigint) IS
    'the merged session window of each row of a partition ordered by epoch integer time';
COMMENT ON AGGREGATE windowing.sessions(timestamptz, interval) IS
    'the merged session windows of a group, in start order';
COMMENT ON AGGREGATE windowing.sessions(bigint, bigint) IS
    'the merged session windows of a group on epoch integer time, in start order';
COMMENT ON FUNCTION windowing.count_window(bigint, bigint) IS
    'numbers of the count windows each row of a partition belongs to';
COMMENT ON TYPE windowing.timestamp_window IS
    'a window [window_start, window_end) in local time; window_time is window_end - 1 microsecond';
COMMENT ON FUNCTION windowing.tumble(timestamp, interval, interval) IS
    'the tumbling window of a local timestamp';
COMMENT ON FUNCTION windowing.tumble_start(timestamp, interval, interval) IS
    'start of the tumbling window of a local timestamp';
COMMENT ON FUNCTION windowing.hop(timestamp, interval, interval, interval) IS
    'every sliding window holding a local timestamp, newest first';
COMMENT ON FUNCTION windowing.hop_start(timestamp, interval, interval, interval) IS
    'start of every sliding window holding a local timestamp';
COMMENT ON FUNCTION windowing.cumulate(timestamp, interval, interval, interval) IS
    'every cumulating window holding a local timestamp';
COMMENT ON FUNCTION windowing.session(timestamp, interval) IS
    'the merged session window of each row of a partition ordered by local time';
COMMENT ON AGGREGATE windowing.sessions(timestamp, interval) IS
    'the merged session windows of a group on local time, in start order';

COMMENT ON FUNCTION windowing.tumbling(interval, interval, text) IS
    'pipeline assigner of tumbling windows';
COMMENT ON FUNCTION windowing.hopping(interval, interval, interval, text) IS
    'pipeline assigner of sliding windows';
COMMENT ON FUNCTION windowing.cumulating(interval, interval, interval, text) IS
    'pipeline assigner of cumulating windows';
COMMENT ON FUNCTION windowing.session(interval) IS
    'pipeline assigner of session windows with a fixed gap';
COMMENT ON FUNCTION windowing.session_dynamic(name) IS
    'pipeline assigner of session windows with each row''s gap read from a column';
COMMENT ON FUNCTION windowing.counting(bigint, bigint) IS
    'pipeline assigner of count windows: per key, every slide rows, the last size rows';
COMMENT ON FUNCTION windowing.describe(windowing.assigner) IS
    'the call that makes a pipeline assigner';
COMMENT ON AGGREGATE windowing.collect(anycompatible) IS
    'every input of a window as an array, in arrival order';

COMMENT ON TABLE windowing.pipeline IS
    'pipelines: definition, cursor and counters, written by the extension''s functions';
COMMENT ON TABLE windowing.window_state IS
    'window state of pipelines, per window, as of their last committed step';
COMMENT ON TABLE windowing.state_log IS
    'window state changes of pipeline steps not yet folded into window_state';

COMMENT ON FUNCTION windowing.create_queue(text, text, text) IS
    'create a table for producers to insert into and pipelines to read';
COMMENT ON FUNCTION windowing.alter_queue(regclass, text) IS
    'make a table a queue, or change whether its rows are deleted once read';
COMMENT ON FUNCTION windowing.create_pipeline(text, regclass, name, name[], windowing.assigner, text,
                                              interval, interval, name, name, text, boolean, interval,
                                              text, text) IS
    'create a pipeline: aggregates of a queue''s rows per key and window, written to a result table; returns its id';
COMMENT ON FUNCTION windowing.drop_pipeline(text, boolean) IS
    'drop a pipeline, and optionally its result and late tables';
COMMENT ON FUNCTION windowing.pause_pipeline(text) IS
    'stop the background worker from running a pipeline';
COMMENT ON FUNCTION windowing.resume_pipeline(text) IS
    'let the background worker run a paused or failed pipeline again';
COMMENT ON FUNCTION windowing.alter_pipeline_owner(text, regrole) IS
    'give a pipeline to another role';
COMMENT ON FUNCTION windowing.alter_pipeline(text, interval, interval, interval, boolean, name, name[],
                                             windowing.assigner, text, text) IS
    'change a pipeline''s out-of-orderness, allowed lateness or idle timeout, from its next step';
COMMENT ON FUNCTION windowing.process(text, bigint) IS
    'run one step of a pipeline now, in this transaction; returns the rows consumed';
COMMENT ON FUNCTION windowing.advance_watermark(text, timestamptz) IS
    'move the watermark of a pipeline on timestamptz time, firing the windows it passes';
COMMENT ON FUNCTION windowing.advance_watermark(text, timestamp) IS
    'move the watermark of a pipeline on timestamp time, firing the windows it passes';
COMMENT ON FUNCTION windowing.advance_watermark(text, bigint) IS
    'move the watermark of a pipeline on bigint time, firing the windows it passes';
COMMENT ON FUNCTION windowing.advance_watermark(text, text) IS
    'move the watermark of a pipeline to a time read as its time column''s type';
COMMENT ON FUNCTION windowing.flush(text) IS
    'end a pipeline''s input: fire every window it holds';
COMMENT ON FUNCTION windowing.open_windows(text) IS
    'what each window of a pipeline not fired yet would give if it fired now';

COMMENT ON VIEW windowing.pipelines IS
    'definition and notification channel of every pipeline';
COMMENT ON VIEW windowing.pipeline_stats IS
    'progress, counters, state size and last error of every pipeline';
COMMENT ON VIEW windowing.queues IS
    'every queue, what becomes of its rows, and the pipelines reading it';
