-- rebuild() and backfill(): a pipeline's results made again from the rows
-- its queue holds, replayed in order of event time as a batch job would
-- read them, then live again.
\i sql/include/differences.sql
\i sql/include/drain.sql

CREATE TABLE rb (k int, ts bigint, v int);
-- (create_pipeline prints ids that depend on the tests before this one)
CREATE FUNCTION pg_temp.pipeline(name text, source text, assigner windowing.assigner,
                                 emit text DEFAULT 'upsert', on_error text DEFAULT 'stop')
RETURNS void LANGUAGE sql AS $$
    SELECT NULL::void FROM windowing.create_pipeline(name, source, 'ts', '{k}', assigner,
        'count(*) AS n, sum(v) AS s', max_out_of_orderness => '5 milliseconds',
        emit => emit, on_error => on_error, start => false, retention => 'keep')
$$;

-- History, out of order by far more than the pipeline allows: read live,
-- in arrival order, most of it is late.
INSERT INTO rb SELECT i % 3, (i * 7919) % 1000, i FROM generate_series(1, 300) i;
SELECT pg_temp.pipeline('rt', 'rb', windowing.tumbling('100 milliseconds'));
SELECT windowing.process('rt');
SELECT count(*) AS late FROM rt_late;

-- Rebuilt: every row is read in order of event time, so none is late and
-- each window holds all its rows, as GROUP BY gives them.
SELECT windowing.rebuild('rt') AS rows_to_replay;
SELECT name, rows_total, rows_done, percent_done, windows_fired, late_rows, watermark
FROM windowing.rebuild_progress;
-- the worker, or process(), replays in steps; progress shows between them
SELECT windowing.process('rt', 120);
SELECT name, rows_total, rows_done, percent_done, windows_fired, late_rows, watermark
FROM windowing.rebuild_progress;
-- a watermark of its own would judge the rows still to replay
SELECT windowing.advance_watermark('rt', 2000::bigint);
SELECT windowing.flush('rt');
SELECT windowing.process('rt');
SELECT count(*) AS rebuilding FROM windowing.rebuild_progress;
SELECT count(*) AS late FROM rt_late;
SELECT rows_consumed, windows_fired, watermark FROM windowing.pipeline_stats WHERE name = 'rt';
-- the last window, [900, 1000), is still open; the others match GROUP BY
CREATE TABLE rt_ref AS
  SELECT k, w.window_start, count(*) AS n, sum(v) AS s
  FROM rb, windowing.tumble(ts, 100) w WHERE w.window_start < 900 GROUP BY 1, 2;
SELECT count(*) AS windows, pg_temp.differences('rt_results', 'rt_ref', 'k, window_start, n, s')
FROM rt_results;

-- Live again: a row committed after the rebuild is judged by the watermark
-- the replay left (990), and a row on time fires the last windows.
INSERT INTO rb VALUES (1, 950, 1000), (2, 10, 1000), (0, 1200, 1);
SELECT windowing.process('rt');
SELECT event_time, reason FROM rt_late ORDER BY event_time;
SELECT k, window_start, n, s FROM rt_results WHERE window_start = 900 ORDER BY k;

-- Rebuilt again, the late row is on time in the replay.  The same rebuild
-- in small steps, each in its own transaction and every second one
-- reading its state back from the heap, gives the same results.
SELECT windowing.rebuild('rt') AS rows_to_replay;
SELECT windowing.process('rt');
SELECT count(*) AS late FROM rt_late;
SELECT k, window_start, n, s FROM rt_results WHERE window_start = 0 ORDER BY k;
SELECT pg_temp.pipeline('rt_steps', 'rb', windowing.tumbling('100 milliseconds'));
SELECT windowing.rebuild('rt_steps') AS rows_to_replay;
CALL pg_temp.drain('rt_steps', 7, 2, flush => false);
SELECT count(*) AS windows, pg_temp.differences('rt_results', 'rt_steps_results',
                                                'k, window_start, n, s, fire_count, is_final')
FROM rt_results;

-- Sessions out of order: the replay merges them as a batch job would.
SELECT pg_temp.pipeline('rs', 'rb', windowing.session('3 milliseconds'));
SELECT windowing.rebuild('rs') AS rows_to_replay;
SELECT windowing.process('rs');
SELECT windowing.flush('rs');
SELECT count(*) AS late FROM rs_late;
CREATE TABLE rs_ref AS
  SELECT k, (s).window_start, count(*) AS n, sum(v) AS s
  FROM (SELECT k, v, windowing.session(ts, 3) OVER (PARTITION BY k ORDER BY ts) AS s FROM rb) x
  GROUP BY 1, 2;
SELECT count(*) AS windows, pg_temp.differences('rs_results', 'rs_ref', 'k, window_start, n, s')
FROM rs_results;

-- A rebuild is part of its transaction: rolled back, nothing changed.
SELECT count(*) AS results_before FROM rs_results;
BEGIN;
SELECT windowing.rebuild('rs') AS rows_to_replay;
SELECT count(*) AS results_during FROM rs_results;
ROLLBACK;
SELECT count(*) AS results_after FROM rs_results;
SELECT count(*) AS rebuilding FROM windowing.rebuild_progress WHERE name = 'rs';
-- and with its steps, in one transaction
BEGIN;
SELECT windowing.rebuild('rs') AS rows_to_replay;
SELECT windowing.process('rs');
SELECT windowing.flush('rs');
COMMIT;
SELECT pg_temp.differences('rs_results', 'rs_ref', 'k, window_start, n, s');

-- Backfill: history's rows, by the names of the queue's columns, go into
-- the queue in the caller's transaction, and the rebuild replays them with
-- the rest.
CREATE TABLE rb_history (extra text, v int, ts bigint, k int);
INSERT INTO rb_history VALUES ('a', 5, -150, 7), ('b', 6, -120, 7), ('c', 7, -30, 8);
BEGIN;
SELECT windowing.backfill('rt', 'rb_history') AS rows_added;
SELECT name, rows_total, rows_done FROM windowing.rebuild_progress;
COMMIT;
SELECT windowing.process('rt');
SELECT k, window_start, n, s FROM rt_results WHERE k IN (7, 8) ORDER BY k, window_start;
SELECT count(*) AS late FROM rt_late;
CREATE TABLE rb_bad_history (k int, v int);
SELECT windowing.backfill('rt', 'rb_bad_history');

-- A row whose aggregate input fails, met in the replay of an 'route'
-- pipeline, goes to the late table with its error; the replay goes on.
CREATE TABLE rbe (k int, ts bigint, v text);
INSERT INTO rbe VALUES (1, 30, '1'), (1, 10, 'x'), (1, 20, '2'), (1, 500, '3');
SELECT NULL::void FROM windowing.create_pipeline('re', 'rbe', 'ts', '{k}',
    windowing.tumbling('100 milliseconds'), 'sum(v::int) AS s', on_error => 'route',
    start => false, retention => 'keep');
SELECT windowing.rebuild('re') AS rows_to_replay;
SELECT windowing.process('re');
SELECT k, window_start, s FROM re_results;
SELECT event_time, reason FROM re_late;

-- What cannot be rebuilt.
CREATE TABLE rbp (k int, v int);
SELECT NULL::void FROM windowing.create_pipeline('rp', 'rbp', NULL, '{k}',
    windowing.tumbling('1 minute'), retention => 'keep');
SELECT windowing.rebuild('rp');
SELECT windowing.create_queue('rbc', 'k int, ts bigint, v int');
INSERT INTO rbc VALUES (1, 20, 1), (1, 5, 2);
SELECT NULL::void FROM windowing.create_pipeline('rc', 'rbc', 'ts', '{k}',
    windowing.tumbling('10 milliseconds'), start => false);
-- a consumed queue still holding every row is replayed
SELECT windowing.rebuild('rc') AS rows_to_replay;
SELECT windowing.process('rc');
SELECT windowing.flush('rc');
SELECT k, window_start, count FROM rc_results ORDER BY window_start;
-- once it has consumed them, they are gone
SELECT windowing.rebuild('rc');
SELECT windowing.rebuild('no_such_pipeline');
