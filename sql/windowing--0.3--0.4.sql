-- windowing 0.3 -> 0.4
\echo Use "ALTER EXTENSION windowing UPDATE" to load this file. \quit

-- A step whose pipeline's state it found in shared memory writes the
-- windows it changed as one row here, rather than one window_state row per
-- window; every windowing.state_log_steps such steps, or whenever a step
-- reads its state from the heap, the changes are folded into window_state
-- and these rows deleted.  Reading state from the heap is window_state,
-- then these changes in step order.
CREATE TABLE windowing.state_log (
    pipeline_id  int NOT NULL REFERENCES windowing.pipeline (id) ON DELETE CASCADE,
    step         bigint NOT NULL,
    changes      bytea NOT NULL,
    PRIMARY KEY (pipeline_id, step)
) WITH (toast_tuple_target = 8160);
-- written once, read back only after a restart: not worth compressing, and
-- kept in the row up to a page
ALTER TABLE windowing.state_log ALTER COLUMN changes SET STORAGE EXTERNAL;
SELECT pg_catalog.pg_extension_config_dump('windowing.state_log', '');
ALTER TABLE windowing.state_log ENABLE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON windowing.state_log
    USING (EXISTS (SELECT 1 FROM windowing.pipeline p
                   WHERE p.id OPERATOR(pg_catalog.=) pipeline_id));
GRANT SELECT ON windowing.state_log TO PUBLIC;

-- Open windows: window_state lags behind the state_log, so they are
-- counted where the state is (shared memory, else the heap).
CREATE FUNCTION windowing._state_windows(id int, steps bigint) RETURNS bigint
AS 'MODULE_PATHNAME', 'windowing_state_windows' LANGUAGE C STRICT;

CREATE OR REPLACE VIEW windowing.pipeline_stats AS
SELECT p.name, p.state,
       CASE WHEN p.time_type OPERATOR(pg_catalog.=) 'pg_catalog.timestamptz'::pg_catalog.regtype
            THEN windowing._as_timestamptz(p.watermark)::text ELSE p.watermark::text END AS watermark,
       CASE WHEN p.time_type OPERATOR(pg_catalog.=) 'pg_catalog.timestamptz'::pg_catalog.regtype
            AND pg_catalog.isfinite(windowing._as_timestamptz(p.watermark))
            THEN pg_catalog.now() OPERATOR(pg_catalog.-) windowing._as_timestamptz(p.watermark) END AS lag,
       p.rows_consumed, p.windows_fired, p.late_routed, p.late_dropped,
       coalesce(windowing._state_windows(p.id, p.steps), s.windows) AS open_windows,
       m.bytes AS state_memory_bytes,
       CASE WHEN m.bytes OPERATOR(pg_catalog.>) 0 THEN 0 ELSE coalesce(s.bytes, 0) END AS state_spilled_bytes,
       p.steps, p.last_step_at, p.failures, p.last_error
FROM windowing.pipeline p
LEFT JOIN LATERAL (SELECT pg_catalog.count(*) AS windows,
                          pg_catalog.sum(pg_catalog.octet_length(w.state))::bigint AS bytes
                   FROM windowing.window_state w
                   WHERE w.pipeline_id OPERATOR(pg_catalog.=) p.id) s ON true
CROSS JOIN LATERAL (SELECT windowing._state_memory_bytes(p.id, p.steps) AS bytes) m;
