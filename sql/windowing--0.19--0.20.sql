-- windowing 0.19 -> 0.20

/* ---- A pipeline's windows on the heap are counted as they are written --- */

-- A pipeline's first step in a process (after a restart) counted its
-- windows in window_state, and pipeline_stats counted every pipeline's
-- whenever it was read: seconds at ten million windows.  The writes to
-- window_state now keep the count, and the bytes of the states, here.
CREATE TABLE windowing.state_size (
    pipeline_id  int PRIMARY KEY,
    windows      bigint NOT NULL,
    bytes        bigint NOT NULL
);
SELECT pg_catalog.pg_extension_config_dump('windowing.state_size', '');
ALTER TABLE windowing.state_size ENABLE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON windowing.state_size
    USING (EXISTS (SELECT 1 FROM windowing.pipeline p
                   WHERE p.id OPERATOR(pg_catalog.=) pipeline_id));
GRANT SELECT ON windowing.state_size TO PUBLIC;
COMMENT ON TABLE windowing.state_size IS
    'windows of each pipeline in window_state, and the bytes of their states';

INSERT INTO windowing.state_size (pipeline_id, windows, bytes)
SELECT pipeline_id, pg_catalog.count(*), pg_catalog.sum(pg_catalog.octet_length(state))
FROM windowing.window_state GROUP BY pipeline_id;

CREATE OR REPLACE FUNCTION windowing._drop_state() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
    DELETE FROM windowing.window_state WHERE pipeline_id OPERATOR(pg_catalog.=) OLD.id;
    DELETE FROM windowing.state_log WHERE pipeline_id OPERATOR(pg_catalog.=) OLD.id;
    DELETE FROM windowing.state_size WHERE pipeline_id OPERATOR(pg_catalog.=) OLD.id;
    RETURN NULL;
END $$;

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

/* ---- One statement of which shards' pipelines exchange watermarks ------ */

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
CREATE OR REPLACE FUNCTION windowing._exchange_watermarks() RETURNS int
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
