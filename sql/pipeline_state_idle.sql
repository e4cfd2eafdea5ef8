-- A step whose watermark reaches windows kept on the heap and fires none of
-- them (here an idle input's watermark) puts them back in memory all the
-- same: a late row then finds its key's fired window, and fires it again.
CREATE TABLE idle_keys (k text, ts timestamptz, v int);
SELECT windowing.create_pipeline('idle_' || kind, 'idle_keys', 'ts', '{k}', assigner,
    'count(*) AS n', allowed_lateness => '1 day', idle_timeout => '1 minute',
    start => false, retention => 'keep') > 0
FROM (VALUES ('s', windowing.session('10 minutes')), ('t', windowing.tumbling('10 minutes'))) a(kind, assigner);
SET windowing.clock = '2026-01-01 00:31+00';
INSERT INTO idle_keys VALUES ('a', '2026-01-01 00:00+00', 1), ('b', '2026-01-01 00:00+00', 1);
SELECT windowing.process('idle_s'), windowing.process('idle_t');
-- a's row at 00:30 fires both keys' first windows
INSERT INTO idle_keys VALUES ('a', '2026-01-01 00:30+00', 1);
SELECT windowing.process('idle_s'), windowing.process('idle_t');
-- as after a restart: a step reads a's windows back, not b's
SELECT windowing._forget_state(id) FROM windowing.pipeline WHERE name LIKE 'idle\__';
INSERT INTO idle_keys VALUES ('a', '2026-01-01 00:21+00', 1);
SELECT windowing.process('idle_s'), windowing.process('idle_t');
-- idle for a minute, the watermark moves to 00:35: b's windows come in, none fires
SET windowing.clock = '2026-01-01 00:35+00';
SELECT windowing.process('idle_s'), windowing.process('idle_t');
-- a late row of b joins its fired window
INSERT INTO idle_keys VALUES ('b', '2026-01-01 00:05+00', 1);
SELECT windowing.process('idle_s'), windowing.process('idle_t');
RESET windowing.clock;
SELECT k, window_start, window_end, n, fire_count FROM idle_s_results ORDER BY 1, 2;
SELECT k, window_start, window_end, n, fire_count FROM idle_t_results ORDER BY 1, 2;

-- An idle input's watermark that only ends windows' lives (their allowed
-- lateness passed) is a change too: their rows become final
SELECT windowing.create_pipeline('idle_h', 'idle_keys', 'ts', '{k}',
    windowing.hopping('10 minutes', '5 minutes'), 'count(*) AS n',
    allowed_lateness => '10 minutes', idle_timeout => '1 minute', start => false) > 0;
SET windowing.clock = '2026-01-01 00:12+00';
SELECT windowing.process('idle_h');
-- idle, the watermark moves to 00:45: every window has fired, the last two
-- are not final yet
SET windowing.clock = '2026-01-01 00:45+00';
SELECT windowing.process('idle_h');
SELECT k, window_start, n, is_final FROM idle_h_results WHERE k = 'a' ORDER BY 2;
SET windowing.clock = '2026-01-02 00:00+00';
SELECT windowing.process('idle_h');
RESET windowing.clock;
SELECT k, window_start, n, is_final FROM idle_h_results WHERE k = 'a' ORDER BY 2;

SELECT windowing.drop_pipeline(name, true) FROM windowing.pipeline WHERE name LIKE 'idle\__' ORDER BY name;
DROP TABLE idle_keys;
