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
