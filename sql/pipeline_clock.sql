-- Windows that close on quiet streams, and processing time, driven by
-- windowing.clock so that the wall clock plays no part in the results.
SET datestyle = ISO;
SET timezone = 'UTC';
\set SHOW_CONTEXT never

-- idle_timeout: with no rows for a minute the watermark follows the clock
-- (less max_out_of_orderness), and the open session closes.
CREATE TABLE taps (who text, ts timestamptz);
SELECT windowing.create_pipeline('taps', 'taps', 'ts', '{who}', windowing.session('10 seconds'),
    max_out_of_orderness => '5 seconds', idle_timeout => '1 minute', start => false, retention => 'consume');
SET windowing.clock = '2026-01-01 12:00:00+00';
INSERT INTO taps VALUES ('ann', '2026-01-01 11:59:50+00'), ('ann', '2026-01-01 11:59:55+00');
SELECT windowing.process('taps');
SELECT count(*) FROM taps_results;
SET windowing.clock = '2026-01-01 12:00:30+00';
SELECT windowing.process('taps');
SELECT count(*) FROM taps_results;
SET windowing.clock = '2026-01-01 12:01:10+00';
SELECT windowing.process('taps');
SELECT who, window_start, window_end, count, fire_count FROM taps_results;
SELECT name, watermark FROM windowing.pipeline_stats WHERE name = 'taps';

-- Processing time (no time column): rows take the clock of the step that
-- reads them, and windows close as the clock passes their end.
CREATE TABLE hits (page text);
SELECT windowing.create_pipeline('hits', 'hits', NULL, '{page}', windowing.tumbling('1 minute'),
    start => false, retention => 'consume');
SET windowing.clock = '2026-01-01 10:00:30+00';
INSERT INTO hits VALUES ('a'), ('b'), ('a');
SELECT windowing.process('hits');
SET windowing.clock = '2026-01-01 10:00:50+00';
INSERT INTO hits VALUES ('a');
SELECT windowing.process('hits');
SELECT count(*) FROM hits_results;
SET windowing.clock = '2026-01-01 10:01:05+00';
INSERT INTO hits VALUES ('b');
SELECT windowing.process('hits');
SELECT page, window_start, window_end, count FROM hits_results ORDER BY page, window_start;
SET windowing.clock = '2026-01-01 10:02:00+00';
SELECT windowing.process('hits');
SELECT page, window_start, window_end, count FROM hits_results ORDER BY page, window_start;
SELECT name, time_column FROM windowing.pipelines WHERE name = 'hits';
RESET windowing.clock;

SELECT windowing.create_pipeline('bad', 'taps', 'ts', assigner => windowing.tumbling('1 minute'),
    idle_timeout => '-1 minute', retention => 'consume');
SELECT windowing.drop_pipeline(name, drop_tables => true) FROM windowing.pipelines;
DROP TABLE taps, hits;
