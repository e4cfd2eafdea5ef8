-- Early firing by the clock (Flink's ContinuousProcessingTimeTrigger
-- before the window's end): 'early every <interval> of processing time'.
-- windowing.clock drives the clock of the steps, so that the wall clock
-- plays no part in the results.
SET datestyle = ISO;
SET timezone = 'UTC';
\set SHOW_CONTEXT never

CREATE TABLE dash_ev (k text, ts timestamptz, v int);
-- (create_pipeline prints ids that depend on the tests before this one)
CREATE FUNCTION pg_temp.pipeline(name text, trig text, emit text DEFAULT 'append',
                                 assigner windowing.assigner DEFAULT windowing.tumbling('1 hour'),
                                 ooo interval DEFAULT '0')
RETURNS void LANGUAGE sql AS $$
    SELECT NULL::void FROM windowing.create_pipeline(name, 'dash_ev', 'ts', '{k}', assigner,
        'count(*) AS n, sum(v) AS total', max_out_of_orderness => ooo,
        allowed_lateness => '1 hour', emit => emit,
        trigger => trig, start => false, retention => 'keep')
$$;
-- a step at a time on the clock given, its state read back from the heap
CREATE FUNCTION pg_temp.step_at(name text, clock text) RETURNS bigint
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM windowing._forget_state(id) FROM windowing.pipeline p WHERE p.name = step_at.name;
    PERFORM set_config('windowing.clock', clock, true);
    RETURN windowing.process(name);
END
$$;
SELECT pg_temp.pipeline('dash', 'early every 10 seconds of processing time');

-- 12:00:03 on the clock: a's hour 10:00 gets two rows, b's one.  Their
-- early timers are at 12:00:10, the next multiple of 10 seconds.
INSERT INTO dash_ev VALUES ('a', '2026-01-01 10:05', 1), ('a', '2026-01-01 10:10', 2),
                           ('b', '2026-01-01 10:20', 5);
SELECT pg_temp.step_at('dash', '2026-01-01 12:00:03');
-- 12:00:09: a third row for a; its timer is set already.  Nothing fires.
INSERT INTO dash_ev VALUES ('a', '2026-01-01 10:30', 3);
SELECT pg_temp.step_at('dash', '2026-01-01 12:00:09');
SELECT count(*) FROM dash_results;
-- 12:00:10: both fire early, with their rows so far (a's first, by key).
SELECT pg_temp.step_at('dash', '2026-01-01 12:00:10');
SELECT k, window_start, n, total, fire_count, is_final, pane FROM dash_results
ORDER BY fire_count, k, window_start;
-- 12:00:15: a row for a sets a timer at 12:00:20.  At 12:00:35 a fires
-- again, once (timers that passed without rows do not fire); b, without
-- a row since it fired, does not.  The row of this very step (c, at
-- 12:00:35) waits for its own timer at 12:00:40.
INSERT INTO dash_ev VALUES ('a', '2026-01-01 10:40', 4);
SELECT pg_temp.step_at('dash', '2026-01-01 12:00:15');
INSERT INTO dash_ev VALUES ('c', '2026-01-01 10:50', 7);
SELECT pg_temp.step_at('dash', '2026-01-01 12:00:35');
SELECT k, window_start, n, total, fire_count, is_final, pane FROM dash_results
ORDER BY fire_count, k, window_start;
-- The watermark passes 11:00: every hour 10:00 fires on time, c's
-- pending early timer with it (it has nothing left to add).  a's hour
-- 11:00 gets its timer at 12:00:40.  A late row fires its window at once,
-- whatever the clock.
INSERT INTO dash_ev VALUES ('a', '2026-01-01 11:01', 1);
SELECT pg_temp.step_at('dash', '2026-01-01 12:00:36');
INSERT INTO dash_ev VALUES ('b', '2026-01-01 10:59', 10);
SELECT pg_temp.step_at('dash', '2026-01-01 12:00:39');
SELECT k, window_start, n, total, fire_count, is_final, pane FROM dash_results
ORDER BY k, window_start, fire_count;
SELECT * FROM windowing.open_windows('dash');
-- a's hour 11:00 fires early when the clock passes its timer.
SELECT pg_temp.step_at('dash', '2026-01-01 12:00:40');
SELECT k, window_start, n, total, fire_count, pane FROM dash_results
WHERE window_start = '2026-01-01 11:00';

-- The same rows in one step, in upsert mode: a window's row is its latest
-- firing.  Only a's hour 11:00 is still open for an early firing.
SELECT pg_temp.pipeline('dash_up', 'early every 10 seconds of processing time', 'upsert');
SELECT pg_temp.step_at('dash_up', '2026-01-01 12:00:03');
SELECT pg_temp.step_at('dash_up', '2026-01-01 12:00:10');
SELECT k, window_start, n, total, fire_count, is_final, pane FROM dash_up_results
ORDER BY k, window_start;

-- Purging: each firing has the rows since the one before; at 12:02:00 the
-- window has none, and the firing on time has the row of 10:20 alone.
TRUNCATE dash_ev;
SELECT pg_temp.pipeline('dash_purge', 'purging early every 1 minute of processing time');
INSERT INTO dash_ev VALUES ('a', '2026-01-01 10:05', 1), ('a', '2026-01-01 10:10', 2);
SELECT pg_temp.step_at('dash_purge', '2026-01-01 12:00:30');
INSERT INTO dash_ev VALUES ('a', '2026-01-01 10:15', 4);
SELECT pg_temp.step_at('dash_purge', '2026-01-01 12:01:00');
SELECT pg_temp.step_at('dash_purge', '2026-01-01 12:02:00');
INSERT INTO dash_ev VALUES ('a', '2026-01-01 10:20', 16), ('a', '2026-01-01 11:30', 8);
SELECT pg_temp.step_at('dash_purge', '2026-01-01 12:02:01');
SELECT k, window_start, n, total, fire_count, pane FROM dash_purge_results
ORDER BY window_start, fire_count;

-- Sessions: a merged session keeps the earliest timer of those it covers.
-- (Out-of-orderness of an hour keeps the watermark out of the way.)
TRUNCATE dash_ev;
SELECT pg_temp.pipeline('dash_sess', 'early every 10 seconds of processing time',
                        assigner => windowing.session('10 minutes'), ooo => '1 hour');
-- 10:00 at 12:00:05 makes [10:00, 10:10) with a timer at 12:00:10, which
-- fires it at 12:00:12; then 10:15 makes [10:15, 10:25), timer 12:00:20.
INSERT INTO dash_ev VALUES ('a', '2026-01-01 10:00', 1);
SELECT pg_temp.step_at('dash_sess', '2026-01-01 12:00:05');
INSERT INTO dash_ev VALUES ('a', '2026-01-01 10:15', 2);
SELECT pg_temp.step_at('dash_sess', '2026-01-01 12:00:12');
-- 10:07 joins them into [10:00, 10:25), which keeps the timer of 12:00:20
-- (the first has none left) and fires there with the three rows.
INSERT INTO dash_ev VALUES ('a', '2026-01-01 10:07', 4);
SELECT pg_temp.step_at('dash_sess', '2026-01-01 12:00:13');
SELECT count(*) FROM dash_sess_results;
SELECT pg_temp.step_at('dash_sess', '2026-01-01 12:00:20');
SELECT k, window_start, window_end, n, total, fire_count, pane FROM dash_sess_results
ORDER BY window_start, window_end, fire_count;

-- Global windows fired by the clock alone, on bigint (millisecond) time:
-- the clock's interval is of the clock, whatever the time column's unit.
CREATE TABLE dash_ms (k int, ts bigint);
SELECT NULL::void FROM windowing.create_pipeline('dash_global', 'dash_ms', 'ts', '{k}',
    windowing.global(), trigger => 'purging early every 1 minute of processing time',
    emit => 'append', start => false, retention => 'keep');
INSERT INTO dash_ms VALUES (1, 5), (1, 900000000), (2, 7);
SELECT pg_temp.step_at('dash_global', '2026-01-01 12:00:30');
INSERT INTO dash_ms VALUES (1, -3);
SELECT pg_temp.step_at('dash_global', '2026-01-01 12:01:00');
SELECT pg_temp.step_at('dash_global', '2026-01-01 12:03:00');
SELECT k, count, fire_count, pane FROM dash_global_results ORDER BY fire_count, k;

-- alter_pipeline between early firing by event time and by the clock: a
-- timer of the other clock goes; the window's next row sets one.
TRUNCATE dash_ev;
SELECT pg_temp.pipeline('dash_alt', 'early every 10 minutes');
INSERT INTO dash_ev VALUES ('a', '2026-01-01 10:05', 1);
SELECT pg_temp.step_at('dash_alt', '2026-01-01 12:00:00');
SELECT windowing.alter_pipeline('dash_alt', "trigger" => 'early every 10 seconds of processing time');
SELECT pg_temp.step_at('dash_alt', '2026-01-01 12:01:00');
SELECT count(*) FROM dash_alt_results;
INSERT INTO dash_ev VALUES ('a', '2026-01-01 10:06', 2);
SELECT pg_temp.step_at('dash_alt', '2026-01-01 12:01:01');
SELECT pg_temp.step_at('dash_alt', '2026-01-01 12:01:10');
SELECT k, n, total, fire_count, pane FROM dash_alt_results ORDER BY fire_count;
SELECT name, "trigger" FROM windowing.pipelines WHERE name = 'dash_alt';

-- Refused.
SELECT windowing.create_pipeline('bad', 'dash_ev', 'ts', '{k}', windowing.tumbling('1 hour'),
    trigger => 'early every 0 seconds of processing time', retention => 'keep');
SELECT windowing.create_pipeline('bad', 'dash_ev', 'ts', '{k}', windowing.counting(10),
    trigger => 'early every 10 seconds of processing time', retention => 'keep');
SELECT windowing.create_pipeline('bad', 'dash_ev', 'ts', '{k}', windowing.tumbling('1 hour'),
    trigger => 'early every 1 month of processing time', retention => 'keep');

RESET windowing.clock;
SELECT windowing.drop_pipeline(name, drop_tables => true) FROM windowing.pipelines
WHERE name LIKE 'dash%';
DROP TABLE dash_ev, dash_ms;
