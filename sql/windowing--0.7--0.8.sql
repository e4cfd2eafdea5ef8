-- windowing 0.7 -> 0.8
/*
 * Window state is kept by key in the memory of the process that steps a
 * pipeline, and a step reads from the heap only the windows it needs: those
 * of the keys its rows name (by window_state's primary key) and those whose
 * timers its watermark reaches, found by their end through a new index.
 * windowing.pipeline counts the keys steps found in memory and those they
 * read from the heap (state_hits, state_misses), and pipeline_stats shows
 * them with the windows in memory and on the heap.
 *
 * Key groups: a pipeline's keys are hashed into key_groups partitions (128,
 * fixed at creation), and each window_state row records its key's group,
 * so that disjoint groups can later be given to different workers without
 * rewriting state.  Existing rows get theirs here.
 */
\echo Use "ALTER EXTENSION windowing UPDATE" to load this file. \quit

CREATE INDEX window_state_by_end ON windowing.window_state (pipeline_id, window_end);

ALTER TABLE windowing.pipeline
    ADD COLUMN state_hits   bigint NOT NULL DEFAULT 0,
    ADD COLUMN state_misses bigint NOT NULL DEFAULT 0;
GRANT UPDATE (state_hits, state_misses) ON windowing.pipeline TO PUBLIC;

ALTER TABLE windowing.pipeline
    ADD COLUMN key_groups int NOT NULL DEFAULT 128 CHECK (key_groups BETWEEN 1 AND 32767);

CREATE FUNCTION windowing._key_group(key bytea, n int) RETURNS smallint
AS 'MODULE_PATHNAME', 'windowing_key_group' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

ALTER TABLE windowing.window_state ADD COLUMN key_group smallint;
UPDATE windowing.window_state SET key_group = windowing._key_group(key, 128);
ALTER TABLE windowing.window_state ALTER COLUMN key_group SET NOT NULL;

-- The windows of it in the memory of the process that holds its state.
CREATE FUNCTION windowing._state_memory_windows(id int, steps bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'windowing_state_memory_windows' LANGUAGE C STRICT;

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
       windowing._backlog_rows(p.source, p.tick_lo, p.tick_hi, p.last_seq, p.scan_from) AS backlog_rows,
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
