-- windowing 0.8 -> 0.9

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
