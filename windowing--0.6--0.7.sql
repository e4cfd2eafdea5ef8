-- windowing 0.6 -> 0.7
/*
 * A failed step's record tells the whole story: windowing.pipeline and
 * pipeline_stats keep, besides last_error (the message) and last_error_at,
 * the error's SQLSTATE, detail and hint (last_error_sqlstate,
 * last_error_detail, last_error_hint: what a late row's error holds) and
 * last_error_seq, the arrival number of the row the step failed on when
 * one is known: the worker finds it as on_error 'route' does.
 * resume_pipeline() clears them with last_error.  A view's columns can
 * only be added at its end, and last_error's rule of who sees it now
 * covers detail and hint too, so pipeline_stats is made again.
 */
\echo Use "ALTER EXTENSION windowing UPDATE" to load this file. \quit

ALTER TABLE windowing.pipeline
    ADD COLUMN last_error_sqlstate text,
    ADD COLUMN last_error_detail   text,
    ADD COLUMN last_error_hint     text,
    ADD COLUMN last_error_seq      bigint;
GRANT UPDATE (last_error_sqlstate, last_error_detail, last_error_hint, last_error_seq)
    ON windowing.pipeline TO PUBLIC;

CREATE OR REPLACE FUNCTION windowing.resume_pipeline(name text) RETURNS void
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

DROP VIEW windowing.pipeline_stats;
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
       CASE WHEN e.shown THEN p.last_error END AS last_error,
       p.last_error_at, p.last_error_sqlstate,
       CASE WHEN e.shown THEN p.last_error_detail END AS last_error_detail,
       CASE WHEN e.shown THEN p.last_error_hint END AS last_error_hint,
       p.last_error_seq
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
GRANT SELECT ON windowing.pipeline_stats TO PUBLIC;
COMMENT ON VIEW windowing.pipeline_stats IS
    'progress, counters, state size and last error of every pipeline, with the row it failed on';
