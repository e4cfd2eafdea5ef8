-- The SQL examples of doc/operations.md, as the page shows them: test/doc_examples.sh
-- checks that every example of the docs appears verbatim in a file here.
-- Its own schema keeps its tables apart from the other tests'.
CREATE SCHEMA doc_operations;
SET search_path = doc_operations, public;

CREATE EXTENSION IF NOT EXISTS windowing;

SET windowing.step_memory = '256MB';
SHOW windowing.read_helper_rows;
RESET windowing.step_memory;

CREATE TABLE device_events (device int, ts bigint, value float8);
SELECT windowing.create_pipeline('device_counts', 'device_events', 'ts', '{device}',
    windowing.tumbling('10 seconds'), 'count(*) AS n, avg(value) AS mean',
    max_out_of_orderness => '1 second', retention => 'keep');
INSERT INTO device_events VALUES (1, 1767268800000, 1.5), (2, 1767268805000, 2.5),
                                 (1, 1767268812000, 3.0);
SELECT windowing.process('device_counts');

SELECT name, state, watermark_ms, lag_ms, backlog_rows, rows_consumed, windows_fired,
       late_routed, open_windows, state_spilled_bytes, failures, last_error
FROM windowing.pipeline_stats WHERE name = 'device_counts';

-- (the worker records failures; here one is recorded as it would, on the
-- second row)
UPDATE windowing.pipeline SET state = 'failed', failures = 5,
    last_error = 'invalid input syntax for type integer: "n/a"', last_error_sqlstate = '22P02',
    last_error_seq = 2, last_error_at = '2026-01-01 12:00:00+00'
WHERE name = 'device_counts';
SELECT name, failures, last_error_sqlstate, last_error, last_error_detail, last_error_seq, last_error_at
FROM windowing.pipeline_stats WHERE state = 'failed';
SELECT device, ts, value FROM device_events
WHERE windowing_seq = (SELECT last_error_seq FROM windowing.pipeline_stats WHERE name = 'device_counts');
SELECT windowing.resume_pipeline('device_counts');
SELECT row_data, reason, error FROM device_counts_late WHERE reason LIKE 'error:%';

BEGIN;
INSERT INTO device_events VALUES (2, 1767268825000, 4.0);  -- read by the next step after COMMIT
SELECT windowing.process('device_counts');                  -- commits with the transaction
SELECT device, window_start, n, mean FROM device_counts_results ORDER BY window_start, device;
COMMIT;

ALTER EXTENSION windowing UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'windowing';

-- (pipelines that earlier tests left running are paused, so that the
-- schedule's statement below steps only this page's pipeline)
UPDATE windowing.pipeline SET state = 'paused'
WHERE state = 'running' AND name <> 'device_counts';
SELECT name, windowing.process(name) AS rows_consumed
FROM windowing.pipelines
WHERE state = 'running' AND pg_has_role(owner, 'USAGE')
ORDER BY name;

SELECT windowing.drop_pipeline('device_counts', drop_tables => true);
RESET search_path;
DROP SCHEMA doc_operations CASCADE;
