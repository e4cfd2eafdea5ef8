-- What pipeline_stats says of a pipeline: the watermark and the newest
-- event time in the time column's type, lag as event time, the rows
-- waiting in the queue, and failures.
SET datestyle = ISO;
SET timezone = 'UTC';
SET intervalstyle = postgres;

SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = 'windowing.pipeline_stats'::regclass AND attnum > 0 ORDER BY attnum;

-- timestamptz time: nothing read yet, so no watermark and no lag
SELECT windowing.create_queue('stats_clicks', 'k int, ts timestamptz');
SELECT windowing.create_pipeline('stats_ts', 'stats_clicks', 'ts', '{k}', windowing.tumbling('1 minute'),
    max_out_of_orderness => '5 seconds', start => false);
CREATE VIEW stats AS
SELECT name, watermark, watermark_time, watermark_ms, max_event_time, max_event_ms, lag, lag_ms,
       backlog_rows, rows_consumed
FROM windowing.pipeline_stats;
SELECT * FROM stats WHERE name = 'stats_ts';

-- backlog_rows counts the rows committed and not yet consumed
INSERT INTO stats_clicks VALUES (1, '2026-01-01 12:00:00+00'), (1, '2026-01-01 12:00:10+00'),
                                (2, '2026-01-01 12:00:20+00');
SELECT backlog_rows FROM stats WHERE name = 'stats_ts';
-- neither the rows of the caller's own transaction, nor those of another
-- not committed yet
BEGIN;
INSERT INTO stats_clicks VALUES (2, '2026-01-01 12:00:05+00');
SELECT backlog_rows FROM stats WHERE name = 'stats_ts';
PREPARE TRANSACTION 'stats_producer';
SELECT backlog_rows FROM stats WHERE name = 'stats_ts';
INSERT INTO stats_clicks VALUES (1, '2026-01-01 12:00:30+00');
SELECT backlog_rows FROM stats WHERE name = 'stats_ts';

-- a step stopped by max_rows inside its tick: the rest of the tick waits
SELECT windowing.process('stats_ts', max_rows => 2);
SELECT * FROM stats WHERE name = 'stats_ts';
-- the row committed late lands in the next tick, and waits too
COMMIT PREPARED 'stats_producer';
SELECT backlog_rows FROM stats WHERE name = 'stats_ts';
SELECT windowing.process('stats_ts');
SELECT * FROM stats WHERE name = 'stats_ts';

-- lag is event time: the same however far the clock is from the events
INSERT INTO stats_clicks VALUES (1, '2100-01-01 00:00:00+00');
SELECT windowing.process('stats_ts');
SELECT watermark_time, max_event_time, lag FROM stats WHERE name = 'stats_ts';
-- the typed watermark takes date arithmetic; wall-clock freshness is the
-- clock less last_step_at (or last_row_at)
SELECT now() - watermark_time < '0' AS watermark_in_future,
       now() - last_step_at >= '0' AS stepped, now() - last_row_at >= '0' AS read_rows
FROM windowing.pipeline_stats WHERE name = 'stats_ts';
-- a watermark past the newest event is no lag
SELECT windowing.flush('stats_ts');
SELECT watermark, watermark_time, lag FROM stats WHERE name = 'stats_ts';

-- bigint time: the same in the column's unit
SELECT windowing.create_queue('stats_ticks', 'k int, ts bigint', retention => 'keep');
SELECT windowing.create_pipeline('stats_ms', 'stats_ticks', 'ts', '{k}', windowing.tumbling('10 seconds'),
    max_out_of_orderness => '1 second', start => false);
INSERT INTO stats_ticks VALUES (1, 10000), (1, 12500), (2, 11000);
SELECT * FROM stats WHERE name = 'stats_ms';
SELECT windowing.process('stats_ms');
SELECT * FROM stats WHERE name = 'stats_ms';
SELECT windowing.advance_watermark('stats_ms', 20000::bigint);
SELECT watermark, watermark_ms, lag_ms FROM stats WHERE name = 'stats_ms';

-- explicit watermarks only: rows read, but no watermark yet, so no lag
SELECT windowing.create_pipeline('stats_explicit', 'stats_ticks', 'ts', '{k}',
    windowing.tumbling('10 seconds'), max_out_of_orderness => NULL, start => false);
SELECT windowing.process('stats_explicit');
SELECT watermark_ms, max_event_ms, lag_ms, backlog_rows FROM stats WHERE name = 'stats_explicit';

-- backlog_rows reads the queue as the caller: NULL for a role that may not
-- read it, or would see only some of its rows
CREATE ROLE stats_reader;
INSERT INTO stats_ticks VALUES (3, 30000);
SET ROLE stats_reader;
SELECT name, backlog_rows, rows_consumed FROM windowing.pipeline_stats ORDER BY name;
RESET ROLE;
GRANT SELECT (windowing_seq, windowing_xid) ON stats_ticks TO stats_reader;
SET ROLE stats_reader;
SELECT name, backlog_rows, rows_consumed FROM windowing.pipeline_stats ORDER BY name;
RESET ROLE;
ALTER TABLE stats_ticks ENABLE ROW LEVEL SECURITY;
CREATE POLICY only_k1 ON stats_ticks USING (k = 1);
SET ROLE stats_reader;
SELECT name, backlog_rows FROM windowing.pipeline_stats ORDER BY name;
RESET ROLE;
-- the queue's owner is not subject to its row security
SELECT name, backlog_rows FROM windowing.pipeline_stats ORDER BY name;

-- a queue dropped under its pipeline has no backlog to show
DROP TABLE stats_ticks;
SELECT name, backlog_rows, rows_consumed FROM windowing.pipeline_stats ORDER BY name;

-- last_error_at is when the worker recorded last_error, with its SQLSTATE,
-- detail, hint and the row at fault (tested with the worker in
-- test/t/050_step_errors.pl and test/t/055_on_error.pl); resuming clears
-- them all
UPDATE windowing.pipeline SET last_error = 'boom', last_error_at = '2026-01-01 12:00:00+00',
    last_error_sqlstate = '22012', last_error_detail = 'a detail', last_error_hint = 'a hint',
    last_error_seq = 42, failures = 5, state = 'failed' WHERE name = 'stats_ts';
SELECT name, state, failures, last_error, last_error_at, last_error_sqlstate, last_error_detail,
       last_error_hint, last_error_seq
FROM windowing.pipeline_stats WHERE name = 'stats_ts';
SELECT windowing.resume_pipeline('stats_ts');
SELECT name, state, failures, last_error, last_error_at, last_error_sqlstate, last_error_detail,
       last_error_hint, last_error_seq
FROM windowing.pipeline_stats WHERE name = 'stats_ts';

DROP VIEW stats;
SELECT windowing.drop_pipeline(p, drop_tables => true)
FROM unnest(ARRAY['stats_ts', 'stats_ms', 'stats_explicit']) p;
DROP TABLE stats_clicks;
DROP ROLE stats_reader;
