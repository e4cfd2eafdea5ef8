-- fire_spread: windows that end together fire over the event time that
-- follows their end, each key at its own moment (a hash of the key), with
-- the results they would have had at their end.  On bigint time
-- (milliseconds), tumbling 10 ms windows, a spread of 5 ms, the watermark
-- moved by hand, each step reading its state back from the heap.
\set SHOW_CONTEXT never
CREATE TABLE spread_ev (k int, ts bigint);
CREATE FUNCTION pg_temp.pipeline(name text, spread interval) RETURNS void
LANGUAGE sql AS $$
    SELECT NULL::void FROM windowing.create_pipeline(name, 'spread_ev', 'ts', '{k}',
        windowing.tumbling('10 milliseconds'), max_out_of_orderness => NULL,
        allowed_lateness => '3 milliseconds', emit => 'append', fire_spread => spread,
        start => false, retention => 'keep')
$$;
CREATE FUNCTION pg_temp.advance(name text, wm bigint) RETURNS void
LANGUAGE sql AS $$
    SELECT windowing._forget_state(id) FROM windowing.pipeline p WHERE p.name = advance.name;
    SELECT windowing.advance_watermark(name, wm);
$$;
SELECT pg_temp.pipeline('spread', '5 milliseconds');
SELECT pg_temp.pipeline('at_end', NULL);

-- Twelve keys, each with two rows in [0, 10).
INSERT INTO spread_ev SELECT k, t FROM generate_series(1, 12) k, generate_series(2, 3) t;
SELECT windowing.process('spread'), windowing.process('at_end');

-- As the watermark goes from 9 (the windows' last instant) to 13, the
-- keys of "spread" fire a few at a time; "at_end" fires them all at 9.
CREATE TABLE spread_seen (wm bigint, spread bigint, at_end bigint);
CREATE FUNCTION pg_temp.watch(wm bigint) RETURNS void
LANGUAGE sql AS $$
    SELECT pg_temp.advance('spread', wm), pg_temp.advance('at_end', wm);
    INSERT INTO spread_seen SELECT wm, (SELECT count(*) FROM spread_results),
                                       (SELECT count(*) FROM at_end_results);
$$;
SELECT pg_temp.watch(8), pg_temp.watch(9);
-- a late row of key 1, within the lateness: without the spread its window
-- fired on time at 9 and fires again with the row; with it the firing on
-- time comes first, then the late one, whatever key 1's moment
INSERT INTO spread_ev VALUES (1, 5);
SELECT windowing.process('spread'), windowing.process('at_end');
SELECT pg_temp.watch(10), pg_temp.watch(11), pg_temp.watch(12);
-- a row past the lateness goes to the late table, fired or not
INSERT INTO spread_ev VALUES (2, 6);
SELECT windowing.process('spread'), windowing.process('at_end');
SELECT pg_temp.watch(13), pg_temp.watch(14);
SELECT * FROM spread_seen ORDER BY wm;

-- The same firings either way; each key fired once on time.
SELECT count(*) AS differences FROM (
  (SELECT k, window_start, count, fire_count, is_final FROM spread_results
   EXCEPT ALL SELECT k, window_start, count, fire_count, is_final FROM at_end_results)
  UNION ALL
  (SELECT k, window_start, count, fire_count, is_final FROM at_end_results
   EXCEPT ALL SELECT k, window_start, count, fire_count, is_final FROM spread_results)) d;
SELECT k, count, fire_count, is_final FROM spread_results WHERE k IN (1, 2)
ORDER BY k, fire_count, is_final;
SELECT event_time, watermark, reason, row_data->>'k' AS k FROM spread_late;
SELECT count(*) FROM at_end_late;
SELECT name, fire_spread FROM windowing.pipelines WHERE name = 'spread';

-- A window waiting for its moment meets a late row in the step whose rows
-- take the watermark past its end, its state kept in memory since the
-- step before: in state_log, not yet in window_state.  It fires on time
-- with the rows it had, then late with the row.
CREATE TABLE spread_kept (k int, ts bigint);
SELECT windowing.create_pipeline('kept', 'spread_kept', 'ts', '{k}',
    windowing.tumbling('10 milliseconds'), max_out_of_orderness => '0',
    allowed_lateness => '3 milliseconds', emit => 'append', fire_spread => '5 milliseconds',
    start => false, retention => 'keep') > 0 AS created;
INSERT INTO spread_kept SELECT k, t FROM generate_series(1, 12) k, generate_series(2, 3) t;
SELECT windowing.process('kept');
SELECT memory_windows, (SELECT count(*) FROM windowing.window_state s WHERE s.pipeline_id = p.id) AS stored
FROM windowing.pipeline_stats JOIN windowing.pipeline p USING (name) WHERE name = 'kept';
-- key 13's row takes the watermark to 9, the windows' last instant; key
-- 3's moment is later, and its row is late
INSERT INTO spread_kept VALUES (13, 10), (3, 5);
SELECT windowing.process('kept');
SELECT k, count, fire_count FROM kept_results WHERE k = 3 ORDER BY fire_count;

-- Refused.
SELECT windowing.create_pipeline('bad', 'spread_ev', 'ts', '{k}', windowing.hopping('10 milliseconds', '5 milliseconds'),
    fire_spread => '5 milliseconds', retention => 'keep');
SELECT windowing.create_pipeline('bad', 'spread_ev', 'ts', '{k}', windowing.tumbling('10 milliseconds'),
    trigger => 'early every 2 rows', fire_spread => '5 milliseconds', retention => 'keep');
SELECT windowing.create_pipeline('bad', 'spread_ev', 'ts', '{k}', windowing.tumbling('10 milliseconds'),
    fire_spread => '0', retention => 'keep');
SELECT windowing.create_pipeline('bad', 'spread_ev', 'ts', '{k}', windowing.tumbling('10 milliseconds'),
    fire_spread => '1 month', retention => 'keep');

SELECT windowing.drop_pipeline(name, drop_tables => true) FROM windowing.pipelines
WHERE name IN ('spread', 'at_end', 'kept');
DROP TABLE spread_ev, spread_seen, spread_kept;
