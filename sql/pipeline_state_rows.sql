-- How a pipeline's windows are kept in window_state, as its steps write
-- and read them.

-- A by-value state is stored as its flag byte and its Datum's bytes, a
-- null one as its flag alone.  States stored before, through
-- datumSerialize (a header of 4 bytes each), are read as they were.
CREATE TABLE old_form (k int, ts bigint, v int);
SELECT windowing.create_pipeline('old_s', 'old_form', 'ts', '{k}',
    windowing.tumbling('100 milliseconds'), 'count(*) AS n, sum(v) AS s, min(v) AS lo',
    start => false, retention => 'consume') > 0;
INSERT INTO old_form VALUES (1, 1000, 5), (2, 1000, NULL);
SELECT windowing.process('old_s');
-- into window_state, as a process that holds none of the state folds it
SELECT count(windowing._forget_state(id)) FROM windowing.pipeline WHERE name = 'old_s';
SELECT windowing.process('old_s');
CREATE FUNCTION pg_temp.states(p_name text) RETURNS SETOF text
LANGUAGE sql AS $$
    SELECT encode(w.state, 'hex') FROM windowing.window_state w
    JOIN windowing.pipeline p ON p.id = w.pipeline_id WHERE p.name = p_name ORDER BY 1
$$;
SELECT pg_temp.states('old_s');
UPDATE windowing.window_state w SET state = CASE encode(w.state, 'hex')
    WHEN '020100000000000000030500000000000000020500000000000000'
        THEN '\x00ffffffff010000000000000001ffffffff050000000000000000ffffffff0500000000000000'::bytea
    WHEN '0201000000000000000505'
        THEN '\x00ffffffff010000000000000001feffffff01feffffff'::bytea END
FROM windowing.pipeline p WHERE p.id = w.pipeline_id AND p.name = 'old_s';
SELECT pg_temp.states('old_s');
SELECT count(windowing._forget_state(id)) FROM windowing.pipeline WHERE name = 'old_s';
INSERT INTO old_form VALUES (1, 1050, 7), (2, 1060, 3), (3, 1200, 1);
SELECT windowing.process('old_s');
SELECT k, window_start, n, s, lo FROM old_s_results ORDER BY k;

\i sql/include/drain.sql
\i sql/include/log_rows.sql

-- A fold updates a window's row where the window last saw it, without
-- looking it up.  A place gone stale is looked up: here VACUUM FULL
-- moves every row of window_state towards its start between two folds,
-- past the rows of a pipeline dropped since, so that the row at each
-- place the store knows is another window's, or none.  Each window's
-- state read back from the heap must be its own.
VACUUM FULL windowing.window_state;
CREATE TABLE filler (k int, ts bigint, v int);
INSERT INTO filler SELECT i, 0, 1 FROM generate_series(1, 50) i;
SELECT windowing.create_pipeline('filler_t', 'filler', 'ts', '{k}', windowing.tumbling('1 second'),
    'count(*) AS n', start => false, retention => 'consume') > 0;
SELECT windowing.process('filler_t');
SELECT count(windowing._forget_state(id)) FROM windowing.pipeline WHERE name = 'filler_t';
SELECT windowing.process('filler_t');
-- windows whose states take about a page each, one a step: the log is
-- folded at the 101st step, as it holds more than 1MB
CREATE TABLE moved (k int, ts bigint, v text);
CREATE FUNCTION pg_temp.wide(k int, round int) RETURNS text LANGUAGE sql AS $$
    SELECT round || string_agg(md5(k || '.' || j), '') FROM generate_series(1, 375) j
$$;
CREATE FUNCTION pg_temp.produce(round int) RETURNS void LANGUAGE sql AS $$
    INSERT INTO moved SELECT 1 + (i - 1) % 100, round * 1000 + i, pg_temp.wide(1 + (i - 1) % 100, round)
    FROM generate_series(1, 101) i
$$;
SELECT windowing.create_pipeline('moved_t', 'moved', 'ts', '{k}', windowing.tumbling('1 day'),
    'count(*) AS n, max(v) AS v', start => false, retention => 'consume') > 0;
SELECT pg_temp.produce(1);
CALL pg_temp.drain('moved_t', 1, 0, 101, false);
SELECT pg_temp.log_rows('moved_t') AS log_rows_after_fold;
SELECT windowing.drop_pipeline('filler_t', true);
VACUUM FULL windowing.window_state;
SELECT pg_temp.produce(2);
CALL pg_temp.drain('moved_t', 1, 0, 101, false);
SELECT pg_temp.log_rows('moved_t') AS log_rows_after_fold;
SELECT count(windowing._forget_state(id)) FROM windowing.pipeline WHERE name = 'moved_t';
SELECT count(*) AS windows,
       count(*) FILTER (WHERE (results->>'n')::int = CASE WHEN key->>'k' = '1' THEN 4 ELSE 2 END
                        AND results->>'v' = pg_temp.wide((key->>'k')::int, 2)) AS their_own
FROM windowing.open_windows('moved_t');

-- One fold of windows of each kind: half of the rows changed by another
-- process (their places stale), the others where their windows saw them,
-- and a new window.
INSERT INTO moved VALUES (101, 3000, pg_temp.wide(101, 3));
SELECT pg_temp.produce(3);
UPDATE windowing.window_state SET fire_count = fire_count
WHERE ctid IN (SELECT w.ctid FROM windowing.window_state w JOIN windowing.pipeline p ON p.id = w.pipeline_id
               WHERE p.name = 'moved_t' ORDER BY w.ctid LIMIT 50);
CALL pg_temp.drain('moved_t', 1, 0, 102, false);
SELECT pg_temp.log_rows('moved_t') AS log_rows_after_fold;
SELECT count(windowing._forget_state(id)) FROM windowing.pipeline WHERE name = 'moved_t';
SELECT count(*) AS windows,
       count(*) FILTER (WHERE (results->>'n')::int = CASE key->>'k' WHEN '1' THEN 6 WHEN '101' THEN 1 ELSE 3 END
                        AND results->>'v' = pg_temp.wide((key->>'k')::int, 3)) AS their_own
FROM windowing.open_windows('moved_t');

-- A fold reads rows at their places, which does not prune their pages as
-- an index scan does: it prunes each page itself, or the versions that
-- earlier folds left would fill it, and its rows' updates would stop being
-- HOT and move to new pages.  Here each page of the pipeline's rows holds
-- three windows of about 1.5kB, with room for two more versions, and each
-- of four folds updates one window of every page: with the pages pruned,
-- every row stays on its page, and holds its newest state (written into a
-- copy of the row's last version where its length did not change), as
-- read back from the heap.
CREATE TABLE pruned (k int, ts bigint, v text);
SELECT windowing.create_pipeline('pruned_t', 'pruned', 'ts', '{k}', windowing.tumbling('1 day'),
    'max(v) AS v', start => false, retention => 'consume') > 0;
CREATE FUNCTION pg_temp.pruned_rows() RETURNS TABLE (k int, page int, nth bigint)
LANGUAGE sql AS $$
    SELECT substring(encode(w.state, 'escape') FROM '(\d+):')::int,
           (w.ctid::text::point)[0]::int,
           row_number() OVER (PARTITION BY (w.ctid::text::point)[0] ORDER BY w.ctid)
    FROM windowing.window_state w JOIN windowing.pipeline p ON p.id = w.pipeline_id
    WHERE p.name = 'pruned_t'
$$;
-- 2100 windows in 101 steps: the log holds 3MB of newest states, folded
INSERT INTO pruned SELECT k, 0, lpad(k::text, 5, '0') || ':0:' || repeat('x', 1500)
FROM generate_series(1, 2100) k;
CALL pg_temp.drain('pruned_t', 21, 0, 101, false);
SELECT pg_temp.log_rows('pruned_t') AS log_rows_after_fold;
CREATE TABLE pruned_pages AS SELECT * FROM pg_temp.pruned_rows();
SELECT count(*) AS windows FROM pruned_pages;
-- each round: the nth window of every page of three (the first page may
-- hold rows of other pipelines), then a window of its own (key 0) up to
-- 707 rows, 101 steps of 7 whose last folds; window_state is not read
-- until the end (a read would prune its pages)
CREATE PROCEDURE pg_temp.pruned_round(round int) LANGUAGE plpgsql AS $$
DECLARE
    n int;
BEGIN
    INSERT INTO pruned SELECT o.k, round, lpad(o.k::text, 5, '0') || ':' || round || ':' || repeat('x', 1500)
    FROM pruned_pages o
    WHERE o.nth = 1 + (round - 1) % 3 AND o.page IN (SELECT page FROM pruned_pages GROUP BY page HAVING count(*) = 3);
    GET DIAGNOSTICS n = ROW_COUNT;
    INSERT INTO pruned SELECT 0, round, '00000:' || round || ':' FROM generate_series(n + 1, 707);
    COMMIT;
    CALL pg_temp.drain('pruned_t', 7, 0, 101, false);
END
$$;
CALL pg_temp.pruned_round(1);
SELECT pg_temp.log_rows('pruned_t') AS log_rows_after_fold;
CALL pg_temp.pruned_round(2);
SELECT pg_temp.log_rows('pruned_t') AS log_rows_after_fold;
CALL pg_temp.pruned_round(3);
SELECT pg_temp.log_rows('pruned_t') AS log_rows_after_fold;
CALL pg_temp.pruned_round(4);
SELECT pg_temp.log_rows('pruned_t') AS log_rows_after_fold;
SELECT count(*) AS windows, count(*) FILTER (WHERE r.page = o.page) AS on_their_page
FROM pg_temp.pruned_rows() r JOIN pruned_pages o USING (k);
SELECT count(windowing._forget_state(id)) FROM windowing.pipeline WHERE name = 'pruned_t';
SELECT count(*) AS windows,
       count(*) FILTER (WHERE w.results->>'v' = lpad(o.k::text, 5, '0') || ':'
                            || CASE WHEN t.page IS NULL THEN 0 ELSE (ARRAY[4, 2, 3])[o.nth] END
                            || ':' || repeat('x', 1500)) AS newest_state
FROM windowing.open_windows('pruned_t') w JOIN pruned_pages o ON o.k = (w.key->>'k')::int
LEFT JOIN (SELECT page FROM pruned_pages GROUP BY page HAVING count(*) = 3) t ON t.page = o.page;

-- A fold deletes the row of a window that left, here a session grown into
-- new bounds, where the window last saw it; a place gone stale (VACUUM
-- FULL between two folds) is looked up.  Each round has a row for each
-- of 250 keys, padded with rows of a session of its own (key 0) to 101
-- steps of 5 rows, the last of which folds (the sessions' states of 4.5kB
-- add up to more than 1MB): the first makes the sessions, the others grow
-- them, and each old row must go.
CREATE TABLE grown (k int, ts bigint, v text);
SELECT windowing.create_pipeline('grown_s', 'grown', 'ts', '{k}', windowing.session('1 second'),
    'count(*) AS n, max(v) AS v', start => false, retention => 'consume') > 0;
CREATE FUNCTION pg_temp.grown_rows() RETURNS TABLE (sessions bigint, keys bigint)
LANGUAGE sql AS $$
    SELECT count(*), count(DISTINCT w.key) FROM windowing.window_state w
    JOIN windowing.pipeline p ON p.id = w.pipeline_id WHERE p.name = 'grown_s'
$$;
CREATE PROCEDURE pg_temp.grown_round(ts bigint) LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO grown SELECT least(i, 251) % 251, ts,
        (SELECT string_agg(md5(i || '.' || j), '') FROM generate_series(1, 141) j)
    FROM generate_series(1, 505) i;
    COMMIT;
    CALL pg_temp.drain('grown_s', 5, 0, 101, false);
END
$$;
CALL pg_temp.grown_round(0);
SELECT pg_temp.log_rows('grown_s') AS log_rows_after_fold, * FROM pg_temp.grown_rows();
CALL pg_temp.grown_round(500);
SELECT pg_temp.log_rows('grown_s') AS log_rows_after_fold, * FROM pg_temp.grown_rows();
VACUUM FULL windowing.window_state;
CALL pg_temp.grown_round(900);
SELECT pg_temp.log_rows('grown_s') AS log_rows_after_fold, * FROM pg_temp.grown_rows();
SELECT count(windowing._forget_state(id)) FROM windowing.pipeline WHERE name = 'grown_s';
SELECT count(*) AS sessions,
       count(*) FILTER (WHERE (results->>'n')::int = CASE key->>'k' WHEN '0' THEN 765 ELSE 3 END
                        AND window_start = '0' AND window_end = '1900') AS grown_twice
FROM windowing.open_windows('grown_s');

SELECT windowing.drop_pipeline(name, true) FROM (VALUES ('old_s'), ('moved_t'), ('pruned_t'), ('grown_s')) p(name);
DROP TABLE old_form, filler, moved, pruned, pruned_pages, grown;
