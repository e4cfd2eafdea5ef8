-- Upsert mode finds a window's result row again by its key and bounds,
-- NULL keys as well: a window marked final at its cleanup, and a session's
-- row replaced by the session it merged into.
CREATE TABLE nk (k int, ts bigint, v int);
SELECT windowing.create_pipeline('nk_tumbling', 'nk', 'ts', '{k}',
    windowing.tumbling('10 milliseconds'), 'count(*) AS n, sum(v) AS total',
    allowed_lateness => '10 milliseconds', start => false, retention => 'keep') > 0 AS created;
SELECT windowing.create_pipeline('nk_session', 'nk', 'ts', '{k}',
    windowing.session('5 milliseconds'), 'count(*) AS n, sum(v) AS total',
    allowed_lateness => '100 milliseconds', start => false, retention => 'keep') > 0 AS created;
INSERT INTO nk VALUES (NULL, 1, 1), (1, 2, 2), (NULL, 12, 3), (1, 13, 4);
SELECT windowing.process('nk_tumbling') AS tumbling, windowing.process('nk_session') AS session;
-- late rows: [0, 10) fires again for both keys, and each key's first
-- session grows into a bigger one; then the watermark passes every
-- cleanup of the tumbling windows
INSERT INTO nk VALUES (NULL, 5, 10), (1, 6, 20), (NULL, 40, 0), (1, 41, 0);
SELECT windowing.process('nk_tumbling') AS tumbling, windowing.process('nk_session') AS session;
SELECT k, window_start, window_end, n, total, fire_count, is_final
FROM nk_tumbling_results ORDER BY window_start, k NULLS FIRST;
SELECT k, window_start, window_end, n, total, fire_count
FROM nk_session_results ORDER BY k NULLS FIRST, window_start;
SELECT windowing.drop_pipeline('nk_tumbling', drop_tables => true),
       windowing.drop_pipeline('nk_session', drop_tables => true);
DROP TABLE nk;
