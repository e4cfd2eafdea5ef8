-- Steps write their changes as one state_log row each; every 100 such
-- steps, when a step finds none of its pipeline's state in memory, and at
-- each step that reads all of its state from the heap (a trigger that
-- fires early every interval), window_state takes them all and the log
-- empties.  A full log whose windows are few (they came and went) is
-- rewritten as one row instead.
-- Whatever the steps and wherever the state is read from, the results are
-- those of one step over every row.
CREATE TABLE taps (k int, ts bigint, v int);
INSERT INTO taps
  SELECT i % 7, (i * 7919) % 300 + i * 4, i % 23 FROM generate_series(1, 4000) i;
SELECT windowing.create_pipeline(name || kind, 'taps', 'ts', '{k}', assigner,
    'count(*) AS n, sum(v) AS total, max(v)',
    max_out_of_orderness => '50 milliseconds', allowed_lateness => lateness,
    emit => emit, start => false, retention => 'consume')
FROM (VALUES ('t', windowing.tumbling('100 milliseconds'), interval '200 milliseconds', 'upsert'),
             ('s', windowing.session('40 milliseconds'), interval '0', 'upsert'),
             ('h', windowing.hopping('100 milliseconds', '25 milliseconds'), interval '0', 'append'))
       a(kind, assigner, lateness, emit),
     unnest(ARRAY['one_', 'small_', 'reread_']) name;

-- Each step of its own (a step's state is kept in memory at commit); the
-- reread_ pipelines lose it every few steps, as after a restart, and read
-- it back from the heap as they need it.
\i sql/include/drain.sql
\i sql/include/log_rows.sql

-- the first step finds no state in memory: it folds the (empty) log, then
-- logs its own changes, as the next ones do: steps this small until 1000
-- steps logged (bigger ones until 100 steps and 1MB, wide_t below); then
-- the log, 1000 rows for a few open windows, becomes one row
CALL pg_temp.drain('small_t', 5, 0, 1, false);
SELECT pg_temp.log_rows('small_t');
CALL pg_temp.drain('small_t', 5, 0, 10, false);
SELECT pg_temp.log_rows('small_t');
-- what pipeline_stats counts is in memory, not yet in window_state
SELECT s.open_windows, (SELECT count(*) FROM windowing.window_state) AS stored
FROM windowing.pipeline_stats s WHERE name = 'small_t';
CALL pg_temp.drain('small_t', 5, 0, 95, false);
SELECT pg_temp.log_rows('small_t');
CALL pg_temp.drain('small_t', 3, 0, 894, false);
SELECT pg_temp.log_rows('small_t');
CALL pg_temp.drain('small_t', 3, 0, 1, false);
SELECT pg_temp.log_rows('small_t');
CALL pg_temp.drain('small_t', 3, 0, 1, false);
SELECT pg_temp.log_rows('small_t');
-- a step whose changes are 12kB (a window's max of a long text): the log
-- is folded after 100 steps, as they hold more than 1MB
CREATE TABLE wide (k int, ts bigint, v text);
INSERT INTO wide SELECT i, i, (SELECT string_agg(md5(i || '.' || j), '') FROM generate_series(1, 375) j)
FROM generate_series(1, 105) i;
SELECT windowing.create_pipeline('wide_t', 'wide', 'ts', '{k}', windowing.tumbling('1 second'),
    'max(v) AS v', start => false, retention => 'consume') > 0;
CALL pg_temp.drain('wide_t', 1, 0, 100, false);
SELECT pg_temp.log_rows('wide_t');
-- each step's changes in two rows of up to a page, kept in the row rather
-- than cut into TOAST chunks (a TOAST pointer takes 18 bytes)
SELECT count(*) AS parts, max(octet_length(changes)) <= 8000 AS within_a_page,
       bool_and(pg_column_size(changes) > octet_length(changes)) AS in_the_row
FROM windowing.state_log l JOIN windowing.pipeline p ON p.id = l.pipeline_id
WHERE p.name = 'wide_t';
CALL pg_temp.drain('wide_t', 1, 0, 5, false);
SELECT pg_temp.log_rows('wide_t');
-- a window keeps its values' own bytes, not pointers into the queue's
-- TOAST table, which go with the queue's rows: its state read back from
-- the heap after they are gone fires the values
SELECT windowing._forget_state(id) FROM windowing.pipeline WHERE name = 'wide_t';
TRUNCATE wide;
SELECT windowing.flush('wide_t');
SELECT count(*), min(length(v)), max(length(v)), count(DISTINCT v) FROM wide_t_results;
SELECT windowing.drop_pipeline('wide_t', true);
-- sessions move their rows to new bounds at each fold, a delete and an
-- insert for each: their log is folded once it holds 2MB, however few
-- steps wrote it, so that a step that finds none of the state in memory
-- (after a restart) folds no more than that.  Ten sessions of 12kB grow
-- at each step: 120kB a step, 17 steps in 2MB.
CREATE TABLE wide_s (k int, ts bigint, v text);
INSERT INTO wide_s SELECT k, s, (SELECT string_agg(md5(s || '.' || k || '.' || j), '') FROM generate_series(1, 375) j)
FROM generate_series(1, 40) s, generate_series(1, 10) k ORDER BY s, k;
SELECT windowing.create_pipeline('wide_s', 'wide_s', 'ts', '{k}', windowing.session('1 second'),
    'max(v) AS v', start => false, retention => 'consume') > 0;
CALL pg_temp.drain('wide_s', 10, 0, 15, false);
SELECT pg_temp.log_rows('wide_s');
CALL pg_temp.drain('wide_s', 10, 0, 25, false);
SELECT pg_temp.log_rows('wide_s');
SELECT windowing._forget_state(id) FROM windowing.pipeline WHERE name = 'wide_s';
SELECT windowing.flush('wide_s');
-- one session a key, its max the greatest of the key's 40 values
SELECT count(*) AS sessions, count(*) FILTER (WHERE r.v = e.v) AS right_max
FROM wide_s_results r
JOIN (SELECT k, max(v) AS v
      FROM (SELECT k, s, string_agg(md5(s || '.' || k || '.' || j), '' ORDER BY j) AS v
            FROM generate_series(1, 40) s, generate_series(1, 10) k, generate_series(1, 375) j
            GROUP BY k, s) x
      GROUP BY k) e USING (k);
SELECT windowing.drop_pipeline('wide_s', true);
DROP TABLE wide;
-- a step that finds no state in memory folds the log into window_state
-- first, then logs its own changes
SELECT windowing._forget_state(id) FROM windowing.pipeline WHERE name = 'small_t';
CALL pg_temp.drain('small_t', 5, 0, 1, false);
SELECT pg_temp.log_rows('small_t');

-- every stored window carries its key's group (of its pipeline's 128)
SELECT count(*) > 0 AS stored,
       count(*) FILTER (WHERE w.key_group = windowing._key_group(w.key, p.key_groups)) = count(*)
           AS in_their_groups,
       count(DISTINCT w.key_group) AS groups, min(p.key_groups) AS key_groups
FROM windowing.window_state w JOIN windowing.pipeline p ON p.id = w.pipeline_id;
-- the hash is the same on every platform: these are fixed
SELECT windowing._key_group('\x'::bytea, 128) AS empty,
       windowing._key_group('\x0102030405'::bytea, 128) AS g128,
       windowing._key_group('\x0102030405'::bytea, 7) AS g7;
SELECT windowing._key_group('\x01', 0);

CALL pg_temp.drain('one_t', 100000, 0);
CALL pg_temp.drain('small_t', 9, 0);
CALL pg_temp.drain('reread_t', 9, 13);
CALL pg_temp.drain('one_s', 100000, 0);
CALL pg_temp.drain('small_s', 9, 0);
CALL pg_temp.drain('reread_s', 9, 13);
CALL pg_temp.drain('one_h', 100000, 0);
CALL pg_temp.drain('small_h', 9, 0);
CALL pg_temp.drain('reread_h', 9, 13);
-- state_size counts what the steps left in window_state
\i sql/include/state_size.sql
SELECT count(*) AS sized, pg_temp.state_size_wrong() AS wrong_sizes
FROM windowing.state_size WHERE windows > 0;

\i sql/include/differences.sql
CREATE FUNCTION pg_temp.summary(results text) RETURNS TABLE (windows bigint, rows_in_windows numeric, refired bigint)
LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY EXECUTE format('SELECT count(*), sum(n), count(*) FILTER (WHERE fire_count > 1) FROM %I',
                                results);
END
$$;
SELECT kind, other, a.*,
       pg_temp.differences('one_' || kind || '_results', other || kind || '_results',
           'k, window_start, window_end, n, total, max, fire_count, is_final') AS results,
       pg_temp.differences('one_' || kind || '_late', other || kind || '_late',
           'event_time, watermark, reason, missed_windows, row_data::text') AS late_rows
FROM unnest(ARRAY['t', 's', 'h']) kind, unnest(ARRAY['small_', 'reread_']) other,
     LATERAL pg_temp.summary('one_' || kind || '_results') a
ORDER BY kind, other;
SELECT count(*) AS log_rows_left FROM windowing.state_log;
-- Every window has left.  Read back from the heap, the log is folded, and
-- window_state keeps no row of a window that left (one late row makes
-- each pipeline step).
INSERT INTO taps VALUES (1, 0, 1);
SELECT count(windowing._forget_state(id)) FROM windowing.pipeline;
SELECT count(*) FILTER (WHERE windowing.process(name) = 1) AS stepped FROM windowing.pipelines;
SELECT count(*) AS rows_left FROM windowing.window_state;
SELECT pg_temp.state_size_wrong() AS wrong_sizes;
-- A window that leaves (a session merged into a bigger one, a window
-- cleaned up) keeps its row in window_state until the log is folded: then
-- the row goes.  A session is stored, grows (its stored row is left
-- behind), and is read back: window_state holds its one window.
CREATE TABLE grow (k int, ts bigint, v int);
SELECT windowing.create_pipeline('grow_s', 'grow', 'ts', '{k}', windowing.session('40 milliseconds'),
    'count(*) AS n', max_out_of_orderness => '50 milliseconds', start => false,
    retention => 'consume') > 0;
CREATE FUNCTION pg_temp.reread() RETURNS TABLE (stored bigint, open bigint)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM windowing._forget_state(id) FROM windowing.pipeline WHERE name = 'grow_s';
    PERFORM windowing.process('grow_s');
    RETURN QUERY
        SELECT (SELECT count(*) FROM windowing.window_state w JOIN windowing.pipeline p
                ON p.id = w.pipeline_id WHERE p.name = 'grow_s'),
               (SELECT count(*) FROM windowing.open_windows('grow_s'));
END
$$;
-- [1000, 1040), in the log
INSERT INTO grow VALUES (1, 1000, 1);
SELECT * FROM pg_temp.reread();
-- stored as the step reads the log back; [1000, 1070) leaves it behind
INSERT INTO grow VALUES (1, 1030, 1);
SELECT * FROM pg_temp.reread();
-- its row goes as the next step reads the log back; [1000, 1090)
INSERT INTO grow VALUES (1, 1050, 1);
SELECT * FROM pg_temp.reread();
SELECT window_start, window_end, results FROM windowing.open_windows('grow_s');
SELECT pg_temp.state_size_wrong() AS wrong_sizes;

SELECT count(*) FROM (SELECT windowing.drop_pipeline(name, true) FROM windowing.pipelines) d;
SELECT count(*) AS log_rows_after_drop FROM windowing.state_log;
SELECT count(*) AS state_rows_after_drop FROM windowing.window_state;
SELECT count(*) AS size_rows_after_drop FROM windowing.state_size;
DROP TABLE taps, grow;
