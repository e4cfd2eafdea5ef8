/* windowing--0.1.sql: the SQL window functions. */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION windowing" to load this file. \quit

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
