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
SELECT pg_temp.pipeline('rb_t', 'rb', windowing.tumbling('100 milliseconds'));
SELECT windowing.process('rb_t');
SELECT count(*) AS late FROM rb_t_late;

-- Rebuilt: every row is read in order of event time, so none is late and
-- each window holds all its rows, as GROUP BY gives them.
SELECT windowing.rebuild('rb_t') AS rows_to_replay;
SELECT name, rows_total, rows_done, percent_done, windows_fired, late_rows, watermark
FROM windowing.rebuild_progress;
-- the worker, or process(), replays in steps; progress shows between them
SELECT windowing.process('rb_t', 120);
SELECT name, rows_total, rows_done, percent_done, windows_fired, late_rows, watermark
FROM windowing.rebuild_progress;
-- a watermark of its own would judge the rows still to replay
SELECT windowing.advance_watermark('rb_t', 2000::bigint);
SELECT windowing.flush('rb_t');
SELECT windowing.process('rb_t');
SELECT count(*) AS rebuilding FROM windowing.rebuild_progress;
SELECT count(*) AS late FROM rb_t_late;
SELECT rows_consumed, windows_fired, watermark FROM windowing.pipeline_stats WHERE name = 'rb_t';
-- the last window, [900, 1000), is still open; the others match GROUP BY
CREATE TABLE rb_t_ref AS
  SELECT k, w.window_start, count(*) AS n, sum(v) AS s
  FROM rb, windowing.tumble(ts, 100) w WHERE w.window_start < 900 GROUP BY 1, 2;
SELECT count(*) AS windows, pg_temp.differences('rb_t_results', 'rb_t_ref', 'k, window_start, n, s')
FROM rb_t_results;

-- Live again: a row committed after the rebuild is judged by the watermark
-- the replay left (990), and a row on time fires the last windows.
INSERT INTO rb VALUES (1, 950, 1000), (2, 10, 1000), (0, 1200, 1);
SELECT windowing.process('rb_t');
SELECT event_time, reason FROM rb_t_late ORDER BY event_time;
SELECT k, window_start, n, s FROM rb_t_results WHERE window_start = 900 ORDER BY k;

-- Rebuilt again, the late row is on time in the replay.  The same rebuild
-- in small steps, each in its own transaction and every second one
-- reading its state back from the heap, gives the same results.
SELECT windowing.rebuild('rb_t') AS rows_to_replay;
SELECT windowing.process('rb_t');
SELECT count(*) AS late FROM rb_t_late;
SELECT k, window_start, n, s FROM rb_t_results WHERE window_start = 0 ORDER BY k;
SELECT pg_temp.pipeline('rb_tsteps', 'rb', windowing.tumbling('100 milliseconds'));
SELECT windowing.rebuild('rb_tsteps') AS rows_to_replay;
CALL pg_temp.drain('rb_tsteps', 7, 2, flush => false);
SELECT count(*) AS windows, pg_temp.differences('rb_t_results', 'rb_tsteps_results',
                                                'k, window_start, n, s, fire_count, is_final')
FROM rb_t_results;

-- Sessions out of order: the replay merges them as a batch job would.
SELECT pg_temp.pipeline('rb_s', 'rb', windowing.session('3 milliseconds'));
SELECT windowing.rebuild('rb_s') AS rows_to_replay;
SELECT windowing.process('rb_s');
SELECT windowing.flush('rb_s');
SELECT count(*) AS late FROM rb_s_late;
CREATE TABLE rb_s_ref AS
  SELECT k, (s).window_start, count(*) AS n, sum(v) AS s
  FROM (SELECT k, v, windowing.session(ts, 3) OVER (PARTITION BY k ORDER BY ts) AS s FROM rb) x
  GROUP BY 1, 2;
SELECT count(*) AS windows, pg_temp.differences('rb_s_results', 'rb_s_ref', 'k, window_start, n, s')
FROM rb_s_results;

-- A rebuild is part of its transaction: rolled back, nothing changed.
SELECT count(*) AS results_before FROM rb_s_results;
BEGIN;
SELECT windowing.rebuild('rb_s') AS rows_to_replay;
SELECT count(*) AS results_during FROM rb_s_results;
ROLLBACK;
SELECT count(*) AS results_after FROM rb_s_results;
SELECT count(*) AS rebuilding FROM windowing.rebuild_progress WHERE name = 'rb_s';
-- and with its steps, in one transaction
BEGIN;
SELECT windowing.rebuild('rb_s') AS rows_to_replay;
SELECT windowing.process('rb_s');
SELECT windowing.flush('rb_s');
COMMIT;
SELECT pg_temp.differences('rb_s_results', 'rb_s_ref', 'k, window_start, n, s');

-- Backfill: history's rows, by the names of the queue's columns, go into
-- the queue in the caller's transaction, and the rebuild replays them with
-- the rest.
CREATE TABLE rb_history (extra text, v int, ts bigint, k int);
INSERT INTO rb_history VALUES ('a', 5, -150, 7), ('b', 6, -120, 7), ('c', 7, -30, 8);
BEGIN;
SELECT windowing.backfill('rb_t', 'rb_history') AS rows_added;
SELECT name, rows_total, rows_done FROM windowing.rebuild_progress;
COMMIT;
SELECT windowing.process('rb_t');
SELECT k, window_start, n, s FROM rb_t_results WHERE k IN (7, 8) ORDER BY k, window_start;
SELECT count(*) AS late FROM rb_t_late;
CREATE TABLE rb_bad_history (k int, v int);
SELECT windowing.backfill('rb_t', 'rb_bad_history');

-- A row whose aggregate input fails, met in the replay of a 'route'
-- pipeline, goes to the late table with its error; the replay goes on.
CREATE TABLE rbe (k int, ts bigint, v text);
INSERT INTO rbe VALUES (1, 30, '1'), (1, 10, 'x'), (1, 20, '2'), (1, 500, '3');
SELECT NULL::void FROM windowing.create_pipeline('rb_e', 'rbe', 'ts', '{k}',
    windowing.tumbling('100 milliseconds'), 'sum(v::int) AS s', on_error => 'route',
    start => false, retention => 'keep');
SELECT windowing.rebuild('rb_e') AS rows_to_replay;
SELECT windowing.process('rb_e');
SELECT k, window_start, s FROM rb_e_results;
SELECT event_time, reason FROM rb_e_late;

-- What cannot be rebuilt.
CREATE TABLE rbp (k int, v int);
SELECT NULL::void FROM windowing.create_pipeline('rb_p', 'rbp', NULL, '{k}',
    windowing.tumbling('1 minute'), retention => 'keep');
SELECT windowing.rebuild('rb_p');
SELECT windowing.create_queue('rbc', 'k int, ts bigint, v int');
INSERT INTO rbc VALUES (1, 20, 1), (1, 5, 2);
SELECT NULL::void FROM windowing.create_pipeline('rb_c', 'rbc', 'ts', '{k}',
    windowing.tumbling('10 milliseconds'), start => false);
-- a consumed queue still holding every row is replayed
SELECT windowing.rebuild('rb_c') AS rows_to_replay;
SELECT windowing.process('rb_c');
SELECT windowing.flush('rb_c');
SELECT k, window_start, count FROM rb_c_results ORDER BY window_start;
-- once it has consumed them, they are gone
SELECT windowing.rebuild('rb_c');
SELECT windowing.rebuild('no_such_pipeline');
