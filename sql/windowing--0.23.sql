/*
 * windowing--0.23.sql: the whole extension at version 0.23, in one script.
 *
 * CREATE EXTENSION windowing runs this script.  It gives the schema that
 * version 0.1 followed by every upgrade script gives (windowing--0.1.sql,
 * then windowing--0.1--0.2.sql ... windowing--0.20--0.21.sql), object for
 * object, grant for grant: sql/upgrade.sql installs both ways and compares
 * them.  What the upgrade scripts do to existing data (waking workers,
 * marking old pipelines, adding triggers to existing queues) has no place
 * here: a fresh install has no data.
 *
 * The parts, in order:
 *   1. the SQL window functions (as in 0.1);
 *   2. window assigners, and the aggregates collect(), max_by() and min_by();
 *   3. the catalog: pipelines, their window state and its log, who may see
 *      and change which rows;
 *   4. the internal functions that pipelines' SQL calls;
 *   5. the functions users call to create, run and manage pipelines;
 *   6. the views;
 *   7. the comments users read in psql.
 */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION windowing" to load this file. \quit


/* ---- 1. The SQL window functions ---------------------------------------- */

-- Everyone may use the window functions.
GRANT USAGE ON SCHEMA windowing TO PUBLIC;

CREATE TYPE windowing.time_window AS (
    window_start timestamptz,
    window_end   timestamptz,
    window_time  timestamptz
);
COMMENT ON TYPE windowing.time_window IS
    'a window [window_start, window_end); window_time is its max timestamp, window_end - 1 microsecond';

CREATE TYPE windowing.bigint_window AS (
    window_start bigint,
    window_end   bigint,
    window_time  bigint
);
COMMENT ON TYPE windowing.bigint_window IS
    'a window [window_start, window_end) on epoch integer time; window_time is window_end - 1';

-- Tumbling windows.  The timestamptz forms are not strict so that tz may be
-- NULL (fixed-length windows); a NULL ts or length gives NULL.
CREATE FUNCTION windowing.tumble(ts timestamptz, size interval,
                                 "offset" interval DEFAULT '0', tz text DEFAULT NULL)
RETURNS windowing.time_window
AS 'MODULE_PATHNAME', 'windowing_tumble'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION windowing.tumble(ts bigint, size bigint, "offset" bigint DEFAULT 0)
RETURNS windowing.bigint_window
AS 'MODULE_PATHNAME', 'windowing_tumble_bigint'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION windowing.tumble_start(ts timestamptz, size interval,
                                       "offset" interval DEFAULT '0', tz text DEFAULT NULL)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'windowing_tumble_start'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION windowing.tumble_start(ts bigint, size bigint, "offset" bigint DEFAULT 0)
RETURNS bigint
AS 'MODULE_PATHNAME', 'windowing_tumble_start_bigint'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Sliding (hop) windows, newest first.
CREATE FUNCTION windowing.hop(ts timestamptz, size interval, slide interval,
                              "offset" interval DEFAULT '0', tz text DEFAULT NULL)
RETURNS SETOF windowing.time_window
AS 'MODULE_PATHNAME', 'windowing_hop'
LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 4;

CREATE FUNCTION windowing.hop(ts bigint, size bigint, slide bigint, "offset" bigint DEFAULT 0)
RETURNS SETOF windowing.bigint_window
AS 'MODULE_PATHNAME', 'windowing_hop_bigint'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 4;

-- The start of every sliding window of ts, streamed from the select list:
-- the fast form for GROUP BY, as tumble_start is for tumbling windows.
CREATE FUNCTION windowing.hop_start(ts timestamptz, size interval, slide interval,
                                    "offset" interval DEFAULT '0', tz text DEFAULT NULL)
RETURNS SETOF timestamptz
AS 'MODULE_PATHNAME', 'windowing_hop_start'
LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 4;

CREATE FUNCTION windowing.hop_start(ts bigint, size bigint, slide bigint, "offset" bigint DEFAULT 0)
RETURNS SETOF bigint
AS 'MODULE_PATHNAME', 'windowing_hop_start_bigint'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 4;

-- Cumulating windows (Flink SQL's CUMULATE).
CREATE FUNCTION windowing.cumulate(ts timestamptz, step interval, max_size interval,
                                   "offset" interval DEFAULT '0', tz text DEFAULT NULL)
RETURNS SETOF windowing.time_window
AS 'MODULE_PATHNAME', 'windowing_cumulate'
LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 4;

CREATE FUNCTION windowing.cumulate(ts bigint, step bigint, max_size bigint, "offset" bigint DEFAULT 0)
RETURNS SETOF windowing.bigint_window
AS 'MODULE_PATHNAME', 'windowing_cumulate_bigint'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE ROWS 4;

-- Session windows of each row: session(ts, gap) OVER (PARTITION BY key ORDER BY ts).
CREATE FUNCTION windowing.session(ts timestamptz, gap interval)
RETURNS windowing.time_window
AS 'MODULE_PATHNAME', 'windowing_session'
LANGUAGE C IMMUTABLE WINDOW PARALLEL SAFE;

CREATE FUNCTION windowing.session(ts bigint, gap bigint)
RETURNS windowing.bigint_window
AS 'MODULE_PATHNAME', 'windowing_session_bigint'
LANGUAGE C IMMUTABLE WINDOW PARALLEL SAFE;

-- The merged sessions of a group, in start order.
CREATE FUNCTION windowing.sessions_add(internal, timestamptz, interval)
RETURNS internal
AS 'MODULE_PATHNAME', 'windowing_sessions_add'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION windowing.sessions_add(internal, bigint, bigint)
RETURNS internal
AS 'MODULE_PATHNAME', 'windowing_sessions_add_bigint'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION windowing.sessions_final(internal, timestamptz, interval)
RETURNS windowing.time_window[]
AS 'MODULE_PATHNAME', 'windowing_sessions_final'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION windowing.sessions_final(internal, bigint, bigint)
RETURNS windowing.bigint_window[]
AS 'MODULE_PATHNAME', 'windowing_sessions_final'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION windowing.sessions_combine(internal, internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'windowing_sessions_combine'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

CREATE FUNCTION windowing.sessions_serialize(internal)
RETURNS bytea
AS 'MODULE_PATHNAME', 'windowing_sessions_serialize'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION windowing.sessions_deserialize(bytea, internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'windowing_sessions_deserialize'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE AGGREGATE windowing.sessions(ts timestamptz, gap interval) (
    SFUNC = windowing.sessions_add,
    STYPE = internal,
    FINALFUNC = windowing.sessions_final,
    FINALFUNC_EXTRA,
    COMBINEFUNC = windowing.sessions_combine,
    SERIALFUNC = windowing.sessions_serialize,
    DESERIALFUNC = windowing.sessions_deserialize,
    PARALLEL = SAFE
);

CREATE AGGREGATE windowing.sessions(ts bigint, gap bigint) (
    SFUNC = windowing.sessions_add,
    STYPE = internal,
    FINALFUNC = windowing.sessions_final,
    FINALFUNC_EXTRA,
    COMBINEFUNC = windowing.sessions_combine,
    SERIALFUNC = windowing.sessions_serialize,
    DESERIALFUNC = windowing.sessions_deserialize,
    PARALLEL = SAFE
);

-- Flink's countWindow(size, slide): the count windows of each row, in
-- partition order.  A NULL slide means slide = size (tumbling).
CREATE FUNCTION windowing.count_window(size bigint, slide bigint DEFAULT NULL)
RETURNS bigint[]
AS 'MODULE_PATHNAME', 'windowing_count_window'
LANGUAGE C IMMUTABLE WINDOW PARALLEL SAFE;

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


/* ---- 2. Window assigners and collect() ---------------------------------- */

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

-- Flink's GlobalWindows: one window per key for all of time, fired by its
-- trigger alone (a count of rows, or every so much event time), its
-- contents cleared by purging; the watermark reaches its end at flush().
CREATE FUNCTION windowing.global()
RETURNS windowing.assigner LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ROW('global', NULL, NULL, NULL, NULL, NULL, NULL, NULL)::windowing.assigner;

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

-- Collect mode (Flink's ListState): every input of a window, as an array,
-- in arrival order.  A whole row: windowing.collect(source_table).
CREATE AGGREGATE windowing.collect(anycompatible) (
    SFUNC = pg_catalog.array_append,
    STYPE = anycompatiblearray,
    COMBINEFUNC = pg_catalog.array_cat,
    PARALLEL = SAFE
);

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


/* ---- 3. The catalog ------------------------------------------------------ */

-- One row per pipeline: its definition, its cursor and its counters.
-- Times (watermark, max_seen) are in the time column's unit: microseconds
-- since 2000-01-01 for timestamptz, the column's own unit for bigint.
CREATE TABLE windowing.pipeline (
    id                   serial PRIMARY KEY,
    name                 text NOT NULL,
    owner                regrole NOT NULL,
    source               regclass NOT NULL,
    time_column          name,            -- NULL: processing time
    time_type            regtype NOT NULL,
    key_columns          name[] NOT NULL,
    assigner             windowing.assigner,  -- NULL: a join pipeline
    aggregates           text NOT NULL,
    max_out_of_orderness interval,
    allowed_lateness     interval NOT NULL,
    result_table         regclass NOT NULL,
    late_table           regclass,
    emit                 text NOT NULL,
    state                text NOT NULL DEFAULT 'running',
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
    failures             int NOT NULL DEFAULT 0,
    -- where a tick's scan of the queue starts (pipeline.c, open_tick): every
    -- row numbered up to scan_from is consumed or aborted; scan_next becomes
    -- scan_from once no transaction older than scan_next_xid runs
    scan_from            bigint NOT NULL DEFAULT 0,
    scan_next            bigint,
    scan_next_xid        xid8,
    -- sliding and cumulating windows kept as slices (operator.c, slices.c);
    -- false only for pipelines made by an older version
    sliced               boolean NOT NULL DEFAULT true,
    last_error_at        timestamptz,     -- when last_error was recorded
    -- windows whose last instant is at or before it were cleaned up under
    -- a smaller allowed lateness and stay late (alter_pipeline)
    cleaned_until        bigint,
    -- what the pipeline's state was made for, set on insert and checked by
    -- each step (_definition_stamp)
    definition_stamp     text NOT NULL,
    -- a row whose aggregate inputs fail: the step fails ('stop'), or the
    -- row goes to the late table and the step goes on ('route')
    on_error             text NOT NULL DEFAULT 'stop',
    -- the rest of the last error, as a late row's error holds it, and the
    -- arrival number (windowing_seq) of the row it was found failing on
    last_error_sqlstate  text,
    last_error_detail    text,
    last_error_hint      text,
    last_error_seq       bigint,
    -- when windows fire: NULL for 'event time', else the trigger as given
    -- ('early every <interval>')
    "trigger"            text,
    -- keys whose windows steps found in the memory of their process, and
    -- keys whose windows they read from the heap
    state_hits           bigint NOT NULL DEFAULT 0,
    state_misses         bigint NOT NULL DEFAULT 0,
    -- the hash partitions of its keys (Flink's max parallelism), fixed at
    -- creation: each window's state is stored with its key's group
    key_groups           int NOT NULL DEFAULT 128,
    -- a rebuild's replay (rebuild()): the replay_rows rows visible in
    -- replay_until, in the order of replay_order, of which replay_done are
    -- replayed; NULL: none under way
    replay_until         pg_snapshot,
    replay_done          bigint NOT NULL DEFAULT 0,
    replay_rows          bigint,
    replay_started_at    timestamptz,
    -- a column of the source whose values are watermarks (punctuated
    -- watermarks); NULL: the watermark follows the rows' event times
    watermark_column     name,
    -- the pipeline whose results are the source, whose watermark this one
    -- takes (as Flink passes watermarks downstream), by id; and that
    -- watermark as the open tick saw it, to take when the tick is read
    watermark_from       int,
    tick_watermark       bigint,
    -- which rows of a window its aggregates see when it fires (Flink's
    -- evictors): NULL for all of them, else the evictor as given
    evictor              text,
    -- windows that end together fire over this much event time after
    -- their end, each key at its own moment; NULL: at their end
    fire_spread          interval,
    -- a join pipeline (join_type not NULL): in an interval join a left row
    -- at t meets the right rows of its key whose time is within
    -- [t + join_lower, t + join_upper]; in a window join (an assigner, no
    -- bounds) the rows of a key in the same window meet; its source, time
    -- column and keys are its left input's (the inputs are in
    -- windowing.join_input) and aggregates holds the select list
    join_type            text,
    join_lower           interval,
    join_upper           interval,
    join_lower_exclusive boolean,
    join_upper_exclusive boolean,
    -- a pipeline stepped as "parallelism" parts, each by its own worker:
    -- part k of n steps the keys of the key groups g with g * n / key_groups
    -- = k (Flink's key-group ranges), with its own row here (its cursor,
    -- watermark, counters and state), the definition the same in every
    -- part's row; part 0 is the row the pipeline was created with
    part                 int NOT NULL DEFAULT 0,
    parallelism          int NOT NULL DEFAULT 1,
    -- the pipeline of a shard of a distributed queue: the name of the
    -- distributed pipeline it was made for (see distributed_pipeline), and
    -- on event time, the watermark of its shard's rows (input_watermark),
    -- the least of the input watermarks of the pipeline's shard_count
    -- shards as last exchanged, by which it fires (shard_watermark)
    shard_of             text,
    input_watermark      bigint,
    shard_watermark      bigint,
    shard_count          int,
    -- and the id of that distributed pipeline on the coordinator (NULL
    -- for pipelines made before 0.18), and the shard's id
    shard_of_id          int,
    shard_id             bigint,
    CONSTRAINT pipeline_name_key UNIQUE (name, part)
);
-- The rules a pipeline row keeps.  A trigger on the columns they read, not
-- CHECK constraints: the executor compiles every CHECK constraint of a
-- table at each UPDATE of it, and every step updates its pipeline's row
-- (its cursor and counters), which this trigger skips.
CREATE FUNCTION windowing._check_pipeline() RETURNS trigger
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
CREATE TRIGGER pipeline_check
    AFTER INSERT OR UPDATE OF emit, state, on_error, key_groups, join_type, join_lower, join_upper,
                              join_lower_exclusive, join_upper_exclusive, assigner, part, parallelism
    ON windowing.pipeline FOR EACH ROW EXECUTE FUNCTION windowing._check_pipeline();
SELECT pg_catalog.pg_extension_config_dump('windowing.pipeline', '');
SELECT pg_catalog.pg_extension_config_dump('windowing.pipeline_id_seq', '');

-- Window state of every pipeline, written by each step for the windows it
-- changed: after a crash, state is exactly what the last committed step
-- left.  key holds the key columns in binary form (send/receive).
CREATE TABLE windowing.window_state (
    pipeline_id  int NOT NULL,
    key          bytea NOT NULL,
    window_start bigint NOT NULL,
    window_end   bigint NOT NULL,
    fire_count   int NOT NULL,
    state        bytea NOT NULL,
    -- windowing._key_group(key, the pipeline's key_groups): disjoint groups
    -- of a pipeline's keys can be given to different workers
    key_group    smallint NOT NULL,
    PRIMARY KEY (pipeline_id, key, window_start, window_end)
) WITH (fillfactor = 70);
-- Folding the state log rewrites many windows' states in place: room on
-- each page keeps those updates HOT (no new entries in the two indexes).
SELECT pg_catalog.pg_extension_config_dump('windowing.window_state', '');
-- A step reads the windows whose timers its watermark reaches by their end.
CREATE INDEX window_state_by_end ON windowing.window_state (pipeline_id, window_end);

-- A step whose pipeline's state it found in shared memory writes the
-- windows it changed as one row here, rather than one window_state row per
-- window; every 100 such steps, or whenever a step reads its state from
-- the heap, the changes are folded into window_state and these rows
-- deleted.  Reading state from the heap is window_state, then these
-- changes in step order.
CREATE TABLE windowing.state_log (
    pipeline_id  int NOT NULL,
    step         bigint NOT NULL,
    changes      bytea NOT NULL,
    -- a step's changes past a page go on in its next parts, each a row
    -- kept in its page rather than cut into TOAST chunks
    part         int NOT NULL DEFAULT 0,
    PRIMARY KEY (pipeline_id, step, part)
) WITH (toast_tuple_target = 8160);
-- written once, read back only after a restart: not worth compressing, and
-- kept in the row up to a page
ALTER TABLE windowing.state_log ALTER COLUMN changes SET STORAGE EXTERNAL;
SELECT pg_catalog.pg_extension_config_dump('windowing.state_log', '');

-- How many windows each pipeline has in window_state, and their states'
-- bytes (octet_length), kept by the writes to window_state, so that
-- neither a pipeline's first step nor pipeline_stats counts its windows.
CREATE TABLE windowing.state_size (
    pipeline_id  int PRIMARY KEY,
    windows      bigint NOT NULL,
    bytes        bigint NOT NULL
);
SELECT pg_catalog.pg_extension_config_dump('windowing.state_size', '');

-- A dropped pipeline's state goes with its row.  A trigger, not foreign
-- keys: a key's check cost every new window_state row and every step's
-- state_log row an index probe and a lock of the pipeline's row, which
-- tripled the cost of inserting them; and only a step that holds the
-- pipeline's lock writes them, which drop_pipeline takes before it deletes.
CREATE FUNCTION windowing._drop_state() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    DELETE FROM windowing.window_state WHERE pipeline_id OPERATOR(pg_catalog.=) OLD.id;
    DELETE FROM windowing.state_log WHERE pipeline_id OPERATOR(pg_catalog.=) OLD.id;
    DELETE FROM windowing.state_size WHERE pipeline_id OPERATOR(pg_catalog.=) OLD.id;
    RETURN NULL;
END $$;
REVOKE ALL ON FUNCTION windowing._drop_state() FROM PUBLIC;
CREATE TRIGGER pipeline_state_gone AFTER DELETE ON windowing.pipeline
    FOR EACH ROW EXECUTE FUNCTION windowing._drop_state();

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
ALTER TABLE windowing.state_log ENABLE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON windowing.state_log
    USING (EXISTS (SELECT 1 FROM windowing.pipeline p
                   WHERE p.id OPERATOR(pg_catalog.=) pipeline_id));
ALTER TABLE windowing.state_size ENABLE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON windowing.state_size
    USING (EXISTS (SELECT 1 FROM windowing.pipeline p
                   WHERE p.id OPERATOR(pg_catalog.=) pipeline_id));

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

-- Window states and pipeline definitions are written by the extension's
-- code only.  A forged state would reach the aggregates' C functions as if
-- they had made it, and a changed definition would misread the stored
-- states; a row's id is never chosen, so it never meets another's state.
-- Users keep what pause, resume, alter_pipeline and their steps write as them.
GRANT SELECT, DELETE ON windowing.pipeline TO PUBLIC;
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
              tick_watermark, parallelism, shard_of, input_watermark, shard_count, shard_of_id,
              shard_id)
    ON windowing.pipeline TO PUBLIC;
GRANT INSERT (join_type, join_lower, join_upper, join_lower_exclusive, join_upper_exclusive)
    ON windowing.pipeline TO PUBLIC;
GRANT SELECT ON windowing.window_state TO PUBLIC;
GRANT SELECT ON windowing.state_log TO PUBLIC;
GRANT SELECT ON windowing.state_size TO PUBLIC;

-- Pipelines over distributed queues, on the coordinator.  Each shard of
-- the queue is read by a pipeline of its own on the node that holds it,
-- "<name>_<shard id>", made by that node's worker from the definition the
-- queue's trigger windowing_pipeline_<id> carries.
CREATE TABLE windowing.distributed_pipeline (
    id           int PRIMARY KEY DEFAULT nextval('windowing.pipeline_id_seq'),
    name         text NOT NULL UNIQUE,
    owner        regrole NOT NULL,
    source       regclass NOT NULL,
    result_table regclass NOT NULL,
    late_table   regclass,
    definition   jsonb NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
SELECT pg_catalog.pg_extension_config_dump('windowing.distributed_pipeline', '');
ALTER TABLE windowing.distributed_pipeline ENABLE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON windowing.distributed_pipeline
    USING (pg_catalog.pg_has_role(owner, 'USAGE'))
    WITH CHECK (pg_catalog.pg_has_role(owner, 'USAGE'));
GRANT SELECT, INSERT, DELETE ON windowing.distributed_pipeline TO PUBLIC;
COMMENT ON TABLE windowing.distributed_pipeline IS
    'pipelines over distributed (Citus) queues, on the coordinator: each shard''s pipeline runs on its node';

-- Every pipeline over a distributed table, whoever asks (row security
-- shows a role only its own): what refuses Citus's shard moves names them.
CREATE FUNCTION windowing._distributed_pipeline_names() RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
SELECT string_agg(format('"%s" (%s)', d.name, d.source::text), ', ' ORDER BY d.name)
FROM windowing.distributed_pipeline d
$$;

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
GRANT USAGE ON SEQUENCE windowing.pipeline_id_seq TO PUBLIC;


/* ---- 4. Internal functions ----------------------------------------------- */

-- Pause, resume and drop wait for a step of the pipeline to finish.
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
    -- a tick read in part (a step's max_rows): its snapshot, and the
    -- arrival number read up to
    tick_hi       pg_snapshot,
    last_seq      bigint NOT NULL DEFAULT 0,
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
              rows_consumed, tick_hi, last_seq)
    ON windowing.join_input TO PUBLIC;

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
AS $$
SELECT p.owner FROM windowing.pipeline p WHERE p.name OPERATOR(pg_catalog.=) $1
UNION ALL
SELECT d.owner FROM windowing.distributed_pipeline d WHERE d.name OPERATOR(pg_catalog.=) $1
LIMIT 1
$$;

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
    IF EXISTS (SELECT FROM windowing.distributed_pipeline d WHERE d.name = pipeline_name) THEN
        RAISE EXCEPTION 'pipeline "%" runs on the shards of a distributed table', pipeline_name
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Each shard''s pipeline, named after the pipeline and the shard, runs on the node that holds the shard; only drop_pipeline() acts on them all.',
                  HINT = 'Act on a shard''s pipeline on its node, or drop the pipeline and create it again.';
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

-- Checks a trigger for an assigner and a time type; true if it fires early.
CREATE FUNCTION windowing._check_trigger("trigger" text, assigner windowing.assigner, time_type regtype)
RETURNS boolean
AS 'MODULE_PATHNAME', 'windowing_check_trigger'
LANGUAGE C STABLE;

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

-- Whether a pipeline's trigger clears windows as they fire ('purging ...').
CREATE FUNCTION windowing._trigger_purges("trigger" text, assigner windowing.assigner, time_type regtype)
RETURNS boolean
AS 'MODULE_PATHNAME', 'windowing_trigger_purges'
LANGUAGE C STABLE;

-- A column's type as DDL, with its typmod.
CREATE FUNCTION windowing._column_type(rel regclass, col name) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
RETURN (SELECT format_type(atttypid, atttypmod) FROM pg_attribute
        WHERE attrelid = rel AND attname = col AND NOT attisdropped);

-- A pipeline tells keys apart by their bytes; an upsert result table's
-- unique key by the types' equality.  Key types where the two differ are
-- refused for upsert, where two keys would share one result row.
CREATE FUNCTION windowing._check_upsert_keys(source regclass, key_columns name[]) RETURNS void
AS 'MODULE_PATHNAME', 'windowing_check_upsert_keys' LANGUAGE C STRICT;

-- Rows committed into a queue wake its database's worker at once, so a
-- window's result follows the row that closed it within milliseconds
-- instead of a poll interval.
CREATE FUNCTION windowing._queue_rows_added() RETURNS trigger
AS 'MODULE_PATHNAME', 'windowing_queue_rows_added' LANGUAGE C;

-- A queue's trigger wakes the worker when rows are committed, and holds
-- what becomes of the queue's rows: 'consume' (the worker empties the
-- table once every pipeline on it has read them) or 'keep' (never
-- deleted).  The choice lives on the table: it goes when the table goes (a
-- new table that reuses the OID inherits nothing) and pg_dump keeps it.
-- Whoever may create triggers on a table may already run code as its
-- owner, so the trigger's argument is as safe as the owner's word.  On the
-- shards of a distributed queue, Citus names it windowing_wake_<shard id>.
CREATE FUNCTION windowing._queue_retention(source regclass) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
AS $$
SELECT pg_catalog.convert_from(pg_catalog.substr(t.tgargs, 1, pg_catalog.length(t.tgargs) OPERATOR(pg_catalog.-) 1), 'UTF8')
FROM pg_catalog.pg_trigger t
WHERE t.tgrelid OPERATOR(pg_catalog.=) $1 AND t.tgname OPERATOR(pg_catalog.~) '^windowing_wake(_[0-9]+)?$'
  AND t.tgfoid OPERATOR(pg_catalog.=) 'windowing._queue_rows_added()'::pg_catalog.regprocedure
  AND t.tgnargs OPERATOR(pg_catalog.=) 1
$$;

-- A table of Citus other than a hash-distributed one (a reference table, a
-- table local to the coordinator's metadata, one distributed by range or
-- append) holds its rows in shards that a step here would not read.
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
                  DETAIL = 'A queue is a plain table of the server its pipelines run on, or a table distributed by hash; reference tables, Citus local tables and tables distributed by range or append are not read.',
                  HINT = 'Make a local table or a hash-distributed table the queue.';
    END IF;
END
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
    IF windowing._distribution_column(source) IS NULL THEN
        PERFORM windowing._check_not_citus(source);
    END IF;
    IF NOT pg_has_role(current_user, queue_owner, 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', source
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Only the owner of a table decides whether its rows are deleted.';
    END IF;
    IF windowing._distribution_column(source) IS NOT NULL THEN
        PERFORM windowing._make_distributed_queue(source, retention);
        RETURN;
    ELSIF windowing._column_type(source, 'windowing_seq') IS NULL THEN
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
    -- on a Citus server an INSERT ... SELECT from a distributed table has
    -- the defaults evaluated on the nodes: the trigger stamps rows here
    IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
        EXECUTE format('CREATE OR REPLACE TRIGGER windowing_stamp BEFORE INSERT ON %s '
                       'FOR EACH ROW EXECUTE FUNCTION windowing._stamp_arrival()', source);
    END IF;
    EXECUTE format('CREATE OR REPLACE TRIGGER windowing_wake AFTER INSERT ON %s '
                   'FOR EACH STATEMENT EXECUTE FUNCTION windowing._queue_rows_added(%L)',
                   source, retention);
END
$$;

-- A pipeline's existence decides when the rows of its queue are deleted
-- (the worker empties a consumed queue only when every pipeline on it
-- runs), and the first pipeline of a queue alters it (two columns, an
-- index, a trigger).  So, as to create an index or a trigger on a table,
-- a pipeline's owner must have the privileges of the queue's owner: else
-- a role that may only read a queue could stop it from ever being emptied
-- with a paused pipeline of its own.  The rule holds whenever a pipeline
-- gets an owner (pipelines made before 0.5 were left as they were).
CREATE FUNCTION windowing._check_queue_owner(owner regrole, source regclass) RETURNS boolean
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    queue_owner oid;
    queue_name  name;
BEGIN
    SELECT c.relowner, c.relname INTO queue_owner, queue_name FROM pg_class c WHERE c.oid = source;
    IF NOT pg_has_role(owner, queue_owner, 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table "%"', queue_name
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = format('The owner of a pipeline must have the privileges of the owner of its source table, role "%s", since the pipeline decides when the table''s rows are deleted.',
                                  pg_get_userbyid(queue_owner)),
                  HINT = format('Have a role with the privileges of role "%s" own the pipeline.',
                                pg_get_userbyid(queue_owner));
    END IF;
    RETURN true;
END
$$;

-- Every new pipeline row meets the rule here: create_pipeline's, made as
-- its caller (a superuser, who bypasses this policy, has every role's
-- privileges), and any row written by hand.  Restrictive, like own_tables.
CREATE POLICY own_queue ON windowing.pipeline AS RESTRICTIVE FOR INSERT
    WITH CHECK (windowing._check_queue_owner(owner, source));

-- And every change of owner, by alter_pipeline_owner() or by hand: a
-- policy cannot compare a row with its old version, and must not refuse
-- the other updates of a pipeline made before 0.5.
CREATE FUNCTION windowing._owner_changed() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM windowing._check_queue_owner(NEW.owner, NEW.source);
    RETURN NEW;
END
$$;
CREATE TRIGGER queue_owner BEFORE UPDATE OF owner ON windowing.pipeline
    FOR EACH ROW WHEN (OLD.owner IS DISTINCT FROM NEW.owner)
    EXECUTE FUNCTION windowing._owner_changed();

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

-- The shared-memory image of a pipeline's state.
CREATE FUNCTION windowing._state_memory_bytes(pipeline_id int, steps bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'windowing_state_memory_bytes' LANGUAGE C STRICT;

CREATE FUNCTION windowing._forget_state(pipeline_id int) RETURNS void
AS 'MODULE_PATHNAME', 'windowing_forget_state' LANGUAGE C STRICT;

-- Microseconds since 2000-01-01 as timestamptz (the storage of both).
CREATE FUNCTION windowing._as_timestamptz(bigint) RETURNS timestamptz
AS 'MODULE_PATHNAME', 'windowing_as_timestamptz' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- The same for a timestamp pipeline's watermark.
CREATE FUNCTION windowing._as_timestamp(bigint) RETURNS timestamp
AS 'MODULE_PATHNAME', 'windowing_as_timestamptz' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- _forget_state(id) evicts a pipeline's state from shared memory, so that
-- its next steps read it from the heap: any role could slow any pipeline
-- down with it.  It is the superuser's alone (tests evict state with it,
-- as a restart would), and drop_pipeline, run by the pipeline's owner,
-- frees the state of the pipeline it deleted through the function below,
-- which frees only the state of a pipeline that no longer exists.  As the
-- extension's owner it sees every pipeline, past row-level security.
REVOKE EXECUTE ON FUNCTION windowing._forget_state(int) FROM PUBLIC;

CREATE FUNCTION windowing._forget_dropped_state(pipeline_id int) RETURNS void
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
SELECT windowing._forget_state($1)
WHERE NOT EXISTS (SELECT FROM windowing.pipeline p WHERE p.id OPERATOR(pg_catalog.=) $1)
$$;

-- Open windows: window_state lags behind the state_log, so they are
-- counted where the state is (shared memory, else the heap).
CREATE FUNCTION windowing._state_windows(id int, steps bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'windowing_state_windows' LANGUAGE C STRICT;

-- The key group of a key (its bytes as window_state holds them) among n:
-- a hash that is the same on every platform.
CREATE FUNCTION windowing._key_group(key bytea, n int) RETURNS smallint
AS 'MODULE_PATHNAME', 'windowing_key_group' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- The part of a pipeline of "parallelism" parts that steps key group
-- "key_group" of n: each part a run of consecutive groups.
CREATE FUNCTION windowing._key_part(key_group int, n int, parallelism int) RETURNS int
AS 'MODULE_PATHNAME', 'windowing_key_part' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- The windows of it in the memory of the process that holds its state.
CREATE FUNCTION windowing._state_memory_windows(id int, steps bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'windowing_state_memory_windows' LANGUAGE C STRICT;

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


/* ---- 5. Creating, running and managing pipelines ------------------------- */

-- create_queue: a new table for producers to insert into and pipelines to
-- read.  "name" and "columns" are SQL, as in CREATE TABLE name (columns):
-- the table goes where CREATE TABLE would put it, and is the caller's.
/* ---- Pipelines over distributed queues (Citus) ---------------------------- */

-- A queue distributed by Citus keeps its rows in shards on the worker
-- nodes.  Citus would evaluate a column default on the coordinator, so its
-- rows get windowing_xid and windowing_seq from a row trigger that runs
-- where the shard is: the node's own transaction id, then a number from
-- the node's own sequence (distributed.c).
CREATE SEQUENCE windowing.arrival;
-- dumped, so that a restored node numbers new rows after the old ones
SELECT pg_catalog.pg_extension_config_dump('windowing.arrival', '');
GRANT SELECT ON SEQUENCE windowing.arrival TO PUBLIC;

CREATE FUNCTION windowing._stamp_arrival() RETURNS trigger
AS 'MODULE_PATHNAME', 'windowing_stamp_arrival' LANGUAGE C;

-- The statement trigger that carries a distributed pipeline's definition
-- to every shard of its queue (Citus creates a table's triggers on its
-- shards, in the transaction that creates them): the node that holds a
-- shard makes the shard's pipeline from it.  It does nothing when it fires.
CREATE FUNCTION windowing._shard_pipeline() RETURNS trigger
AS 'MODULE_PATHNAME', 'windowing_shard_pipeline' LANGUAGE C;

-- A late row of a distributed pipeline goes to the late table's shard on
-- the node that read it: the table's distribution column is filled from
-- the row's own value of it.
CREATE FUNCTION windowing._late_key() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN jsonb_populate_record(NEW, jsonb_build_object(TG_ARGV[0], NEW.row_data -> TG_ARGV[0]));
END
$$;

-- The column a hash-distributed Citus table is distributed by, else NULL.
CREATE FUNCTION windowing._distribution_column(source regclass) RETURNS name
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    col name;
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
        EXECUTE 'SELECT pg_catalog.column_to_column_name(logicalrelid, partkey) FROM pg_catalog.pg_dist_partition
                 WHERE logicalrelid = $1 AND partmethod = ''h'''
            INTO col USING source;
    END IF;
    RETURN col;
END
$$;

-- _make_queue() of a distributed table: the columns without defaults,
-- stamped on the nodes (rows already there too), the index on the arrival
-- number, the wake trigger that holds the retention.
CREATE FUNCTION windowing._make_distributed_queue(source regclass, retention text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unsafe text := current_setting('citus.enable_unsafe_triggers');
BEGIN
    IF windowing._column_type(source, 'windowing_seq') IS NULL THEN
        EXECUTE format('ALTER TABLE %s ADD COLUMN windowing_xid xid8, ADD COLUMN windowing_seq bigint', source);
        EXECUTE format('CREATE INDEX ON %s (windowing_seq)', source);
    ELSIF NOT EXISTS (SELECT FROM pg_trigger WHERE tgrelid = source AND tgname = 'windowing_stamp') THEN
        RAISE EXCEPTION 'column "windowing_seq" of table % is not an arrival number', source
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'A distributed queue numbers its rows on the nodes, through its trigger windowing_stamp.',
                  HINT = 'Rename the column.';
    END IF;
    -- Citus runs a distributed table's triggers on its shards when told so
    PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    EXECUTE format('CREATE OR REPLACE TRIGGER windowing_stamp BEFORE INSERT OR UPDATE OF windowing_seq ON %s '
                   'FOR EACH ROW EXECUTE FUNCTION windowing._stamp_arrival()', source);
    EXECUTE format('UPDATE %s SET windowing_seq = NULL WHERE windowing_seq IS NULL', source);
    EXECUTE format('CREATE OR REPLACE TRIGGER windowing_wake AFTER INSERT ON %s '
                   'FOR EACH STATEMENT EXECUTE FUNCTION windowing._queue_rows_added(%L)',
                   source, retention);
    PERFORM set_config('citus.enable_unsafe_triggers', unsafe, true);
END
$$;

-- The result and late tables of a pipeline over a distributed queue:
-- distributed by the same column and co-located with the queue, so that a
-- node writes a shard's results next to the shard.
CREATE FUNCTION windowing._distribute_outputs(source regclass, dist_col name, res regclass, late regclass)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unsafe text := current_setting('citus.enable_unsafe_triggers');
    t      regclass;
BEGIN
    FOREACH t IN ARRAY ARRAY[res, late] LOOP
        CONTINUE WHEN t IS NULL;
        IF t = late AND windowing._column_type(late, dist_col) IS NULL THEN
            EXECUTE format('ALTER TABLE %s ADD COLUMN %I %s', late, dist_col,
                           windowing._column_type(source, dist_col));
        END IF;
        IF windowing._distribution_column(t) IS NULL THEN
            EXECUTE 'SELECT pg_catalog.create_distributed_table($1, $2, colocate_with => $3::text)'
                USING t, dist_col, source;
        END IF;
        IF windowing._distribution_column(t) <> dist_col OR NOT EXISTS (
               SELECT FROM pg_dist_partition a, pg_dist_partition b
               WHERE a.logicalrelid = t AND b.logicalrelid = source AND a.colocationid = b.colocationid) THEN
            RAISE EXCEPTION 'table % is not distributed as its queue % is', t, source
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = format('A shard''s results are written on the node that holds the shard: the table must be distributed by column "%s", co-located with the queue.', dist_col);
        END IF;
    END LOOP;
    IF late IS NOT NULL THEN
        PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
        EXECUTE format('CREATE OR REPLACE TRIGGER windowing_late_key BEFORE INSERT ON %s '
                       'FOR EACH ROW EXECUTE FUNCTION windowing._late_key(%L)', late, dist_col);
        PERFORM set_config('citus.enable_unsafe_triggers', unsafe, true);
    END IF;
END
$$;

-- What a pipeline over a distributed queue cannot be.
CREATE FUNCTION windowing._check_distributed(source regclass, dist_col name, key_columns name[],
                                             parallelism int, watermark_from text)
RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT dist_col = ANY (key_columns) THEN
        RAISE EXCEPTION 'the key columns of a pipeline over distributed table % must include its distribution column "%"',
                        source, dist_col
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Each shard is read on the node that holds it, so all the rows of a key must be in one shard.',
                  HINT = format('Add "%s" to key_columns.', dist_col);
    END IF;
    IF parallelism <> 1 OR watermark_from IS NOT NULL THEN
        RAISE EXCEPTION 'a pipeline over distributed table % runs as a pipeline per shard', source
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'It takes neither parallelism nor watermark_from.';
    END IF;
END
$$;

-- create_pipeline over a distributed queue, once its tables are made: the
-- pipeline is recorded here and its definition put on the queue's shards.
CREATE FUNCTION windowing._create_distributed_pipeline(name text, source regclass, res regclass,
                                                       late regclass, definition jsonb)
RETURNS int
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unsafe text := current_setting('citus.enable_unsafe_triggers');
    new_id int;
BEGIN
    INSERT INTO windowing.distributed_pipeline (name, owner, source, result_table, late_table, definition)
    VALUES (name, current_user::regrole, source, res, late, definition)
    RETURNING id INTO new_id;
    PERFORM windowing._shard_progress_reset(name);
    PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %s FOR EACH STATEMENT '
                   'EXECUTE FUNCTION windowing._shard_pipeline(%L)',
                   'windowing_pipeline_' || new_id, source,
                   definition || jsonb_build_object('name', name, 'id', new_id, 'owner', current_user,
                                                    'source', source::text, 'result_table', res::text,
                                                    'late_table', late::text));
    PERFORM set_config('citus.enable_unsafe_triggers', unsafe, true);
    RETURN new_id;
END
$$;

-- Whether a shard still carries the definition of distributed pipeline
-- "pipeline_name" whose id is "pipeline_id" (the trigger drop_pipeline()
-- drops): a pipeline dropped and made again under the same name has
-- another id.  A shard's pipeline made before 0.18 knows no id, nor does
-- a definition of then.
CREATE FUNCTION windowing._shard_carries(shard regclass, pipeline_name text, pipeline_id int)
RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
AS $$
SELECT EXISTS (SELECT FROM pg_trigger t
               CROSS JOIN LATERAL (SELECT convert_from(substr(t.tgargs, 1, length(t.tgargs) - 1),
                                                       'UTF8')::jsonb AS def) d
               WHERE t.tgrelid = shard AND t.tgfoid = 'windowing._shard_pipeline()'::regprocedure
                 AND t.tgnargs = 1
                 AND d.def ->> 'name' = pipeline_name
                 AND (d.def ->> 'id')::int IS NOT DISTINCT FROM pipeline_id)
$$;

-- On a node: the pipelines its shards should have and do not, and those
-- it has for a distributed pipeline that is gone (drop_name), with their
-- owners.  A shard is the node's if the trigger that carries the
-- definition is on it: it came with the shard.  A pipeline made for a
-- distributed pipeline since dropped and made again under its name is
-- dropped first, and its successor made at the next call.
CREATE FUNCTION windowing._shard_pipelines_pending()
RETURNS TABLE (owner oid, shard regclass, shard_id bigint, definition jsonb, drop_name text)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY
    SELECT to_regrole(d.def ->> 'owner')::oid, s.shard, s.shardid, d.def, NULL::text
    FROM pg_trigger t
    CROSS JOIN LATERAL (SELECT convert_from(substr(t.tgargs, 1, length(t.tgargs) - 1), 'UTF8')::jsonb AS def) d
    CROSS JOIN LATERAL (SELECT ds.shardid, t.tgrelid::regclass AS shard FROM pg_dist_shard ds
                        WHERE ds.logicalrelid = to_regclass(d.def ->> 'source')
                          AND to_regclass(shard_name(ds.logicalrelid, ds.shardid, false)) = t.tgrelid) s
    WHERE t.tgfoid = 'windowing._shard_pipeline()'::regprocedure AND t.tgnargs = 1
      AND NOT EXISTS (SELECT FROM windowing.pipeline p WHERE p.name = (d.def ->> 'name') || '_' || s.shardid)
    UNION ALL
    SELECT p.owner::oid, NULL, NULL, NULL, p.name
    FROM windowing.pipeline p
    WHERE p.shard_of IS NOT NULL AND p.part = 0
      AND NOT windowing._shard_carries(p.source, p.shard_of, p.shard_of_id);
END
$$;

-- Makes and drops, as the current user, the pipelines of _shard_pipelines_pending()
-- that user owns: run by the node's worker as each owner.
CREATE FUNCTION windowing._sync_shard_pipelines() RETURNS int
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s     record;
    d     jsonb;
    nsp   text;
    done  int := 0;
BEGIN
    -- Citus hides shards from queries on pg_class, which create_pipeline reads
    PERFORM set_config('citus.override_table_visibility', 'off', true);
    FOR s IN SELECT * FROM windowing._shard_pipelines_pending() x
             WHERE pg_has_role(current_user, x.owner, 'USAGE') LOOP
        IF s.drop_name IS NOT NULL THEN
            PERFORM windowing.drop_pipeline(s.drop_name);
        ELSE
            d := s.definition;
            nsp := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE c.oid = s.shard);
            PERFORM windowing.create_pipeline((d ->> 'name') || '_' || s.shard_id, s.shard,
                time_column => d ->> 'time_column',
                key_columns => (SELECT array_agg(k::name) FROM jsonb_array_elements_text(d -> 'key_columns') k),
                assigner => (d ->> 'assigner')::windowing.assigner,
                aggregates => d ->> 'aggregates',
                max_out_of_orderness => (d ->> 'max_out_of_orderness')::interval,
                allowed_lateness => (d ->> 'allowed_lateness')::interval,
                result_table => windowing._colocated_shard(d ->> 'result_table', s.shard_id),
                late_table => coalesce(windowing._colocated_shard(d ->> 'late_table', s.shard_id), ''),
                emit => d ->> 'emit',
                start => (d ->> 'start')::boolean,
                idle_timeout => (d ->> 'idle_timeout')::interval,
                on_error => d ->> 'on_error',
                "trigger" => d ->> 'trigger',
                watermark_column => d ->> 'watermark_column',
                evictor => d ->> 'evictor',
                fire_spread => (d ->> 'fire_spread')::interval);
            UPDATE windowing.pipeline SET shard_of = d ->> 'name', shard_of_id = (d ->> 'id')::int,
                shard_id = s.shard_id,
                shard_count = (SELECT count(*) FROM pg_dist_shard
                               WHERE logicalrelid = to_regclass(d ->> 'source'))
            WHERE pipeline.name = (d ->> 'name') || '_' || s.shard_id;
        END IF;
        done := done + 1;
    END LOOP;
    RETURN done;
END
$$;

-- The watermark of a shard's pipeline whose input has been idle for its
-- idle_timeout: the clock, as pipeline_idle_watermark() has it; else NULL.
CREATE FUNCTION windowing._idle_watermark(last_row_at timestamptz, idle_timeout interval,
                                          time_type regtype, max_out_of_orderness interval)
RETURNS bigint
AS 'MODULE_PATHNAME', 'windowing_idle_watermark' LANGUAGE C STABLE;

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
CREATE FUNCTION windowing._shard_progress_reset(pipeline_name text) RETURNS void
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

-- Whether a pipeline is a shard's whose watermark the nodes exchange: one
-- on event time (a shard of processing time or given watermarks has its
-- own).
CREATE FUNCTION windowing._exchanged(p windowing.pipeline) RETURNS boolean
LANGUAGE sql IMMUTABLE
RETURN p.shard_of IS NOT NULL AND p.time_column IS NOT NULL AND p.max_out_of_orderness IS NOT NULL;

-- On a node: moves the watermark of each of its shards' pipelines on
-- event time to the least input watermark of all the shards of its
-- distributed pipeline, as Flink's operators take the least watermark of
-- the partitions they read.  A shard's input watermark is what its rows
-- make (max event time - max_out_of_orderness), or the clock once it has
-- been idle for the pipeline's idle_timeout (an idle partition, which
-- then holds none back).  The node first writes to shard_progress what
-- its shards' pipelines show that the table does not (one write, to
-- every node, when anything moved), then reads the table; until every
-- shard's pipeline is there, none moves.  Run by the node's worker;
-- returns how many pipelines' watermarks moved.
CREATE FUNCTION windowing._exchange_watermarks() RETURNS int
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    known  jsonb;
    news   text;
    moved  int;
BEGIN
    IF to_regclass('windowing.shard_progress') IS NULL
       OR NOT EXISTS (SELECT FROM windowing.pipeline p WHERE windowing._exchanged(p)) THEN
        RETURN 0;
    END IF;
    -- the reference table alone in the query: Citus reads it here
    SELECT coalesce(jsonb_agg(x), '[]') INTO known FROM windowing.shard_progress x;
    SELECT string_agg(format('(%L, %s, %s, %L, %L)', p.shard_of, p.shard_id,
                             coalesce(p.input_watermark::text, 'NULL'), p.last_row_at, p.created_at), ', ')
    INTO news
    FROM windowing.pipeline p
    LEFT JOIN jsonb_to_recordset(known) AS k(shard_of text, shard_id bigint, input_watermark bigint,
                                             last_row_at timestamptz)
        ON k.shard_of = p.shard_of AND k.shard_id = p.shard_id
    WHERE windowing._exchanged(p) AND p.part = 0
      -- not once drop_pipeline() dropped it (or made it again), before
      -- this node's worker did
      AND windowing._shard_carries(p.source, p.shard_of, p.shard_of_id)
      AND (k.shard_of IS NULL OR k.input_watermark IS DISTINCT FROM p.input_watermark
           OR k.last_row_at IS DISTINCT FROM p.last_row_at);
    IF news IS NOT NULL THEN
        EXECUTE 'INSERT INTO windowing.shard_progress AS x '
                '(shard_of, shard_id, input_watermark, last_row_at, created_at) VALUES ' || news ||
                ' ON CONFLICT (shard_of, shard_id) DO UPDATE SET input_watermark = excluded.input_watermark,'
                ' last_row_at = excluded.last_row_at';
        SELECT coalesce(jsonb_agg(x), '[]') INTO known FROM windowing.shard_progress x;
    END IF;
    WITH definition AS (
        SELECT DISTINCT ON (p.shard_of) p.shard_of, p.idle_timeout, p.time_type, p.max_out_of_orderness
        FROM windowing.pipeline p WHERE p.shard_of IS NOT NULL
    ), agreed AS (
        SELECT k.shard_of,
               min(coalesce(GREATEST(k.input_watermark, windowing._idle_watermark(
                   coalesce(k.last_row_at, k.created_at), d.idle_timeout, d.time_type,
                   d.max_out_of_orderness)), -9223372036854775808)) AS w,
               count(*) AS shards
        FROM jsonb_to_recordset(known) AS k(shard_of text, shard_id bigint, input_watermark bigint,
                                            last_row_at timestamptz, created_at timestamptz)
        JOIN definition d ON d.shard_of = k.shard_of
        GROUP BY k.shard_of
    )
    UPDATE windowing.pipeline p SET shard_watermark = a.w
    FROM agreed a
    WHERE p.shard_of = a.shard_of AND a.shards = p.shard_count
      AND a.w > coalesce(p.shard_watermark, -9223372036854775808)
      AND windowing._exchanged(p);
    GET DIAGNOSTICS moved = ROW_COUNT;
    RETURN moved;
END
$$;

-- The name of the shard of distributed table "tbl" co-located with shard
-- "shard_id" (of the queue), in the schema of both.
CREATE FUNCTION windowing._colocated_shard(tbl text, shard_id bigint) RETURNS name
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    found bigint;
BEGIN
    IF tbl IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT o.shardid INTO found FROM pg_dist_shard q JOIN pg_dist_shard o
        ON o.logicalrelid = tbl::regclass AND o.shardminvalue = q.shardminvalue
    WHERE q.shardid = shard_id;
    RETURN (parse_ident(shard_name(tbl::regclass, found, false)))[2];
END
$$;

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

-- The watermark of pipeline "id" and the transaction that last wrote its
-- row, as of the caller's snapshot, whoever owns it: a pipeline reading
-- its results takes that watermark (watermarks are public, as in
-- pipeline_stats).  A pipeline of several parts is at the least of their
-- watermarks, and written by the caller's transaction if any part is.
CREATE FUNCTION windowing._upstream_watermark(id int, OUT watermark bigint, OUT written xid)
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
SELECT CASE WHEN pg_catalog.count(*) OPERATOR(pg_catalog.=) pg_catalog.count(p.watermark)
            THEN pg_catalog.min(p.watermark) END,
       (pg_catalog.array_agg(p.xmin ORDER BY p.xmin OPERATOR(pg_catalog.=)
                             pg_catalog.xid(pg_catalog.pg_current_xact_id_if_assigned()) DESC NULLS LAST))[1]
FROM windowing.pipeline u JOIN windowing.pipeline p ON p.name OPERATOR(pg_catalog.=) u.name
WHERE u.id OPERATOR(pg_catalog.=) $1
$$;

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
    -- a queue distributed by Citus: a pipeline per shard, on its node
    dist_col  name := windowing._distribution_column(source);
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
    IF dist_col IS NOT NULL THEN
        PERFORM windowing._check_distributed(source, dist_col, key_columns, parallelism, watermark_from);
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

    IF dist_col IS NOT NULL THEN
        res_rel := format('%I.%I', nsp, res_name)::regclass;
        late_rel := CASE WHEN late_name <> '' THEN format('%I.%I', nsp, late_name)::regclass END;
        PERFORM windowing._distribute_outputs(source, dist_col, res_rel, late_rel);
        RETURN windowing._create_distributed_pipeline(name, source, res_rel, late_rel, jsonb_build_object(
            'time_column', time_column, 'key_columns', key_columns, 'assigner', assigner::text,
            'aggregates', aggregates, 'max_out_of_orderness', max_out_of_orderness,
            'allowed_lateness', allowed_lateness, 'emit', emit, 'start', start,
            'idle_timeout', idle_timeout, 'on_error', on_error, 'trigger', "trigger",
            'watermark_column', watermark_column, 'evictor', evictor, 'fire_spread', fire_spread));
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
    IF windowing._distribution_column(source) IS NOT NULL THEN
        RAISE EXCEPTION 'a join pipeline cannot read distributed table %', source
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Only aggregate pipelines run over distributed queues, a pipeline per shard.';
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
-- drop_pipeline() of a pipeline over a distributed queue: without the
-- trigger that carries its definition, each node's worker drops the
-- pipelines of its shards.  Its shards' watermarks go last: deleting them
-- locks windowing.shard_progress on every node, where the nodes' workers
-- write theirs, and Citus's deadlock detection, which counts all of a
-- node's local processes as one transaction, would see a cycle if a
-- worker waited for that lock while the drop waited for a shard.
CREATE FUNCTION windowing._drop_distributed_pipeline(pipeline_name text, drop_tables boolean)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    d      windowing.distributed_pipeline;
    unsafe text := current_setting('citus.enable_unsafe_triggers');
BEGIN
    IF NOT pg_has_role(current_user, windowing._pipeline_owner(pipeline_name), 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of pipeline "%"', pipeline_name
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Only the owner of a pipeline or a superuser may run, change or drop it.';
    END IF;
    DELETE FROM windowing.distributed_pipeline p WHERE p.name = pipeline_name RETURNING * INTO d;
    PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    IF EXISTS (SELECT FROM pg_class WHERE oid = d.source) THEN
        EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', 'windowing_pipeline_' || d.id, d.source);
    END IF;
    PERFORM set_config('citus.enable_unsafe_triggers', unsafe, true);
    IF drop_tables AND EXISTS (SELECT FROM pg_class WHERE oid = d.result_table) THEN
        EXECUTE format('DROP TABLE %s', d.result_table);
    END IF;
    IF drop_tables AND EXISTS (SELECT FROM pg_class WHERE oid = d.late_table) THEN
        EXECUTE format('DROP TABLE %s', d.late_table);
    END IF;
    PERFORM windowing._shard_progress_reset(pipeline_name);
END
$$;

CREATE FUNCTION windowing.drop_pipeline(name text, drop_tables boolean DEFAULT false)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p  windowing.pipeline;
    st regclass;
BEGIN
    IF EXISTS (SELECT FROM windowing.distributed_pipeline d WHERE d.name = drop_pipeline.name) THEN
        PERFORM windowing._drop_distributed_pipeline(name, drop_tables);
        RETURN;
    END IF;
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
    UPDATE windowing.pipeline SET state = 'running', failures = 0, last_error = NULL,
                                  last_error_at = NULL, last_error_sqlstate = NULL,
                                  last_error_detail = NULL, last_error_hint = NULL,
                                  last_error_seq = NULL
    WHERE pipeline.name = resume_pipeline.name;
    PERFORM windowing._wake_workers();
END
$$;

-- A pipeline names its owner by OID, which no dependency protects: REASSIGN
-- OWNED and DROP OWNED pass it by, and its role can then be dropped.  This
-- hands a pipeline to another role, as ALTER TABLE ... OWNER TO does a
-- table: its owner (or a superuser) may give it to a role it can act as.
CREATE FUNCTION windowing.alter_pipeline_owner(name text, new_owner regrole) RETURNS void
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

-- alter_pipeline(name, parallelism => n): every part reads the queue up to
-- one snapshot, then the parts' state changes hands by key group (parts.c).
CREATE FUNCTION windowing._change_parallelism(pipeline_name text, parallelism int) RETURNS void
AS 'MODULE_PATHNAME', 'windowing_change_parallelism' LANGUAGE C STRICT;

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

-- One step now, in this transaction: what the background worker runs.
CREATE FUNCTION windowing.process(name text, max_rows bigint DEFAULT NULL) RETURNS bigint
AS 'MODULE_PATHNAME', 'windowing_process' LANGUAGE C;

CREATE FUNCTION windowing.advance_watermark(name text, ts timestamptz) RETURNS void
AS 'MODULE_PATHNAME', 'windowing_advance_watermark' LANGUAGE C STRICT;

CREATE FUNCTION windowing.advance_watermark(name text, ts timestamp) RETURNS void
AS 'MODULE_PATHNAME', 'windowing_advance_watermark_timestamp' LANGUAGE C STRICT;

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


/* ---- 6. Views ------------------------------------------------------------- */

CREATE VIEW windowing.pipelines AS
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
       CASE WHEN p.join_type IS NULL
            THEN windowing._backlog_rows(p.source, p.tick_lo, p.tick_hi, p.last_seq, p.scan_from)
            ELSE (SELECT pg_catalog.sum(windowing._backlog_rows(i.source, i.tick_lo, NULL, i.scan_from,
                                                                i.scan_from))::bigint
                  FROM windowing.join_input i WHERE i.pipeline_id OPERATOR(pg_catalog.=) p.id)
       END AS backlog_rows,
       p.rows_consumed, p.windows_fired, p.late_routed, p.late_dropped,
       CASE WHEN p.join_type IS NULL
            THEN coalesce(windowing._state_windows(p.id, p.steps), s.windows, 0) END AS open_windows,
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
LEFT JOIN windowing.state_size s ON s.pipeline_id OPERATOR(pg_catalog.=) p.id
CROSS JOIN LATERAL (SELECT windowing._state_memory_bytes(p.id, p.steps) AS bytes) m
-- a join's state is the rows its state tables keep
LEFT JOIN LATERAL (SELECT pg_catalog.sum(pg_catalog.pg_total_relation_size(i.state_table))::bigint AS bytes
                   FROM windowing.join_input i
                   WHERE i.pipeline_id OPERATOR(pg_catalog.=) p.id) j ON true;

-- Every queue, what becomes of its rows, and the pipelines reading it.
CREATE VIEW windowing.queues AS
SELECT t.tgrelid::pg_catalog.regclass AS queue, windowing._queue_retention(t.tgrelid) AS retention,
       ARRAY(SELECT p.name FROM windowing.pipeline p
             WHERE (p.source OPERATOR(pg_catalog.=) t.tgrelid AND p.join_type IS NULL
                    AND p.part OPERATOR(pg_catalog.=) 0)
                OR p.id OPERATOR(pg_catalog.=) ANY (SELECT i.pipeline_id FROM windowing.join_input i
                                                    WHERE i.source OPERATOR(pg_catalog.=) t.tgrelid)
             UNION ALL
             SELECT d.name FROM windowing.distributed_pipeline d
             WHERE d.source OPERATOR(pg_catalog.=) t.tgrelid
             ORDER BY 1) AS pipelines
FROM pg_catalog.pg_trigger t
WHERE t.tgname OPERATOR(pg_catalog.~) '^windowing_wake(_[0-9]+)?$'
  AND t.tgfoid OPERATOR(pg_catalog.=) 'windowing._queue_rows_added()'::pg_catalog.regprocedure;

GRANT SELECT ON windowing.pipelines, windowing.pipeline_stats, windowing.queues TO PUBLIC;

-- A node's answer to run_command_on_all_nodes(), or its error.
CREATE FUNCTION windowing._node_answer(node text, success boolean, answer text) RETURNS json
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT success THEN
        RAISE EXCEPTION 'could not read the pipelines of node %', node
            USING ERRCODE = 'connection_failure', DETAIL = answer;
    END IF;
    RETURN answer::json;
END
$$;

-- On the coordinator: the pipeline of each shard of each pipeline over a
-- distributed queue, read from the node that holds the shard (a query on
-- each node, each in its own transaction), and a row for the whole
-- pipeline (node and shard_pipeline NULL): its counters summed, its
-- watermark the least of its shards'.  A node that cannot be reached
-- fails the query.
CREATE FUNCTION windowing._distributed_pipeline_stats()
RETURNS TABLE (name text, node text, shard_pipeline text, state text, watermark_time timestamptz,
               watermark_ms bigint, backlog_rows bigint, rows_consumed bigint, windows_fired bigint,
               late_routed bigint, late_dropped bigint, open_windows bigint,
               last_step_at timestamptz, last_error text)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM windowing.distributed_pipeline) THEN
        RETURN;
    END IF;
    RETURN QUERY
    WITH answer AS (
        SELECT n.nodename || ':' || n.nodeport AS node, r.success, r.result
        FROM run_command_on_all_nodes(
            $q$SELECT COALESCE(pg_catalog.json_agg(x), '[]') FROM (
                 SELECT p.shard_of, s.name, s.state, s.watermark_time, s.watermark_ms, s.backlog_rows,
                        s.rows_consumed, s.windows_fired, s.late_routed, s.late_dropped,
                        s.open_windows, s.last_step_at, s.last_error
                 FROM windowing.pipeline_stats s JOIN windowing.pipeline p ON p.name = s.name
                 WHERE p.shard_of IS NOT NULL) x$q$) r
        JOIN pg_dist_node n ON n.nodeid = r.nodeid
    ), shard AS (
        SELECT d.name AS pipeline, a.node, s.*
        FROM answer a
        CROSS JOIN LATERAL json_to_recordset(windowing._node_answer(a.node, a.success, a.result))
            AS s(shard_of text, name text, state text, watermark_time timestamptz, watermark_ms bigint,
                 backlog_rows bigint, rows_consumed bigint, windows_fired bigint, late_routed bigint,
                 late_dropped bigint, open_windows bigint, last_step_at timestamptz, last_error text)
        JOIN windowing.distributed_pipeline d ON d.name = s.shard_of
    )
    SELECT s.pipeline, s.node, s.name, s.state, s.watermark_time, s.watermark_ms, s.backlog_rows,
           s.rows_consumed, s.windows_fired, s.late_routed, s.late_dropped, s.open_windows,
           s.last_step_at, s.last_error
    FROM shard s
    UNION ALL
    SELECT s.pipeline, NULL, NULL, string_agg(DISTINCT s.state, ', '), min(s.watermark_time),
           min(s.watermark_ms), sum(s.backlog_rows)::bigint, sum(s.rows_consumed)::bigint,
           sum(s.windows_fired)::bigint, sum(s.late_routed)::bigint, sum(s.late_dropped)::bigint,
           sum(s.open_windows)::bigint, max(s.last_step_at), NULL
    FROM shard s GROUP BY s.pipeline
    ORDER BY 1, 2 NULLS FIRST, 3;
END
$$;

CREATE VIEW windowing.distributed_pipeline_stats AS
SELECT * FROM windowing._distributed_pipeline_stats();
GRANT SELECT ON windowing.distributed_pipeline_stats TO PUBLIC;
COMMENT ON VIEW windowing.distributed_pipeline_stats IS
    'pipelines over distributed (Citus) queues: each shard''s pipeline as its node reports it, and the whole pipeline';

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


/* ---- 7. Comments -------------------------------------------------------- */

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
COMMENT ON FUNCTION windowing.stagger(windowing.assigner, text) IS
    'shift tumbling windows by a random or clock-drawn part of their size, drawn once (Flink''s WindowStagger)';
COMMENT ON FUNCTION windowing.global() IS
    'pipeline assigner of one window per key for all of time, fired by its trigger';
COMMENT ON FUNCTION windowing.describe(windowing.assigner) IS
    'the call that makes a pipeline assigner';
COMMENT ON AGGREGATE windowing.collect(anycompatible) IS
    'every input of a window as an array, in arrival order';
COMMENT ON AGGREGATE windowing.max_by(anyelement, anycompatible) IS
    'the value of the row with the greatest key, the first such row on a tie (Flink''s maxBy)';
COMMENT ON AGGREGATE windowing.min_by(anyelement, anycompatible) IS
    'the value of the row with the least key, the first such row on a tie (Flink''s minBy)';

COMMENT ON TABLE windowing.pipeline IS
    'pipelines: definition, cursor and counters (a row per part), written by the extension''s functions';
COMMENT ON TABLE windowing.window_state IS
    'window state of pipelines, per window, as of their last committed step';
COMMENT ON TABLE windowing.state_log IS
    'window state changes of pipeline steps not yet folded into window_state';
COMMENT ON TABLE windowing.state_size IS
    'windows of each pipeline in window_state, and the bytes of their states';
COMMENT ON TABLE windowing.replay_order IS
    'rows of the queues of pipelines being rebuilt, in the order of their replay';

COMMENT ON FUNCTION windowing.create_queue(text, text, text) IS
    'create a table for producers to insert into and pipelines to read';
COMMENT ON FUNCTION windowing.alter_queue(regclass, text) IS
    'make a table a queue, or change whether its rows are deleted once read';
COMMENT ON FUNCTION windowing.create_pipeline(text, regclass, name, name[], windowing.assigner, text,
                                              interval, interval, name, name, text, boolean, interval,
                                              text, text, text, name, text, text, interval, int) IS
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
                                             windowing.assigner, text, text, text, int) IS
    'change a pipeline''s out-of-orderness, allowed lateness, idle timeout, early firing interval or parallelism, from its next step';
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
COMMENT ON FUNCTION windowing.rebuild(text) IS
    'make a pipeline''s results again from the rows its queue holds, replayed in order of event time by its next steps';
COMMENT ON FUNCTION windowing.backfill(text, regclass) IS
    'add the rows of a history table to a pipeline''s queue, then rebuild the pipeline';
COMMENT ON FUNCTION windowing.create_join_pipeline(text, regclass, name, name[], regclass, name, name[], text,
                                                   interval, interval, boolean, boolean, text, interval,
                                                   interval, name, name, name, name, boolean, text) IS
    'create a join pipeline over two queues: each left row with the right rows of its key within an interval of its time, written to a result table; returns its id';
COMMENT ON FUNCTION windowing.create_window_join_pipeline(text, regclass, name, name[], regclass, name, name[],
                                                          text, windowing.assigner, text, interval, interval,
                                                          interval, name, name, name, name, boolean, text) IS
    'create a window join pipeline over two queues: the pairs of rows of a key in the same window, written when the window fires; returns its id';
COMMENT ON TABLE windowing.join_input IS
    'the two inputs of each join pipeline: queue, time column, keys, state table, cursor and watermark';
COMMENT ON VIEW windowing.rebuild_progress IS
    'rebuilds under way: rows to replay, rows replayed, windows fired';

COMMENT ON VIEW windowing.pipelines IS
    'definition and notification channel of every pipeline';
COMMENT ON VIEW windowing.pipeline_stats IS
    'progress, counters, state size and last error of every pipeline (a row per part), with the row it failed on';
COMMENT ON VIEW windowing.queues IS
    'every queue, what becomes of its rows, and the pipelines reading it';
