-- A full state_log whose windows are few becomes one row (state.c,
-- compact_log) rather than a window_state row per window.
\i sql/include/drain.sql
\i sql/include/differences.sql
\i sql/include/state_size.sql
\i sql/include/log_rows.sql

-- A log of windows that come and go becomes one row once it is full: the
-- newest states of the few windows it still holds (a window's max of a
-- 12kB text, so that 100 steps of one row fill 1MB), and the windows that
-- left with a row in window_state.  Read back, it gives what the rows it
-- replaced gave: the results are those of one step.  Tumbling windows
-- fire and leave; each key's session grows back in time at every row of
-- the key, leaving its former bounds behind.
CREATE TABLE churn (k int, ts bigint, v text);
INSERT INTO churn SELECT i % 2, i * 10, (SELECT string_agg(md5(i || '.' || j), '') FROM generate_series(1, 375) j)
FROM generate_series(1, 300) i;
CREATE TABLE churn_back AS SELECT k, 4000 - ts AS ts, v FROM churn;
SELECT count(windowing.create_pipeline(name || kind, source, 'ts', '{k}', assigner,
    'count(*) AS n, max(v) AS v', max_out_of_orderness => ooo, start => false,
    retention => 'consume'))
FROM (VALUES ('t', 'churn', windowing.tumbling('40 milliseconds'), interval '0'),
             ('s', 'churn_back', windowing.session('25 milliseconds'), interval '10 seconds'))
       a(kind, source, assigner, ooo),
     unnest(ARRAY['churn_one_', 'churn_']) name;
CALL pg_temp.drain('churn_one_t', 100000, 0);
CALL pg_temp.drain('churn_one_s', 100000, 0);
CREATE FUNCTION pg_temp.churn_log() RETURNS TABLE (kind text, log_rows bigint, stored bigint)
LANGUAGE sql AS $$
    SELECT kind, pg_temp.log_rows('churn_' || kind),
           (SELECT count(*) FROM windowing.window_state w JOIN windowing.pipeline p
            ON p.id = w.pipeline_id WHERE p.name = 'churn_' || kind)
    FROM unnest(ARRAY['t', 's']) kind
$$;
-- 101 steps: the first finds no state, then 100 log theirs, and the last
-- rewrites the log as one row
CALL pg_temp.drain('churn_t', 1, 0, 101, false);
CALL pg_temp.drain('churn_s', 1, 0, 101, false);
SELECT * FROM pg_temp.churn_log();
-- read back (as after a restart), folded: window_state has the open
-- windows, which leave before the next 101 steps rewrite the log again
SELECT count(windowing._forget_state(id)) FROM windowing.pipeline WHERE name LIKE 'churn\_%';
CALL pg_temp.drain('churn_t', 1, 0, 102, false);
CALL pg_temp.drain('churn_s', 1, 0, 102, false);
SELECT * FROM pg_temp.churn_log();
-- the log says those windows left: read back, they stay gone
SELECT kind, count(*) AS open_in_memory
FROM unnest(ARRAY['t', 's']) kind, windowing.open_windows('churn_' || kind) GROUP BY kind ORDER BY kind;
SELECT count(windowing._forget_state(id)) FROM windowing.pipeline WHERE name LIKE 'churn\_%';
SELECT kind, count(*) AS open_read_back
FROM unnest(ARRAY['t', 's']) kind, windowing.open_windows('churn_' || kind) GROUP BY kind ORDER BY kind;
CALL pg_temp.drain('churn_t', 1, 37);
CALL pg_temp.drain('churn_s', 1, 37);
SELECT kind, pg_temp.differences('churn_one_' || kind || '_results', 'churn_' || kind || '_results',
           'k, window_start, window_end, n, v, fire_count, is_final') AS results
FROM unnest(ARRAY['t', 's']) kind;
SELECT pg_temp.state_size_wrong() AS wrong_sizes;
DROP TABLE churn, churn_back;

SELECT count(windowing.drop_pipeline(name, true)) FROM windowing.pipelines WHERE name LIKE 'churn%';

-- A fold or a rewrite deletes the log rows it replaces; the next steps'
-- rows go onto their pages once pruned (heap_rows.c), rather than each
-- step extending state_log by a page until vacuum comes by.  Rows of about
-- 6kB, one a page: the log is emptied at 1MB, every 170 steps or so, and
-- 400 steps would add about 400 pages without that.
ALTER TABLE windowing.state_log SET (autovacuum_enabled = false);
VACUUM FULL windowing.state_log;
CREATE TABLE reuse (k int, ts bigint, v text);
INSERT INTO reuse SELECT i % 2, i * 10, (SELECT string_agg(md5(i || '.' || j), '') FROM generate_series(1, 180) j)
FROM generate_series(1, 400) i;
SELECT count(windowing.create_pipeline('reuse', 'reuse', 'ts', '{k}', windowing.tumbling('40 milliseconds'),
    'count(*) AS n, max(v) AS v', start => false, retention => 'consume'));
SELECT pg_relation_size('windowing.state_log') / 8192 AS pages_before \gset
CALL pg_temp.drain('reuse', 1, 0, 400, false);
SELECT pg_relation_size('windowing.state_log') / 8192 - :pages_before < 300 AS pages_reused;
SELECT count(*) AS results FROM reuse_results;
ALTER TABLE windowing.state_log RESET (autovacuum_enabled);
DROP TABLE reuse;
SELECT count(windowing.drop_pipeline(name, true)) FROM windowing.pipelines WHERE name = 'reuse';
