-- Upsert mode with allowed lateness, where windows fire, fire again and
-- leave by the ten thousand in one step: a step holds at most about ten
-- thousand firings before it writes them (a window that fires again
-- later in the step writes its row again), and the rows of windows that
-- leave are marked final, or deleted (sessions merged away), ten thousand
-- a statement.  Whatever the step size, the results are the same, and
-- they are what the rows say.
CREATE TABLE crowd (k int, ts timestamptz, v int);
SELECT windowing.create_pipeline(name, 'crowd', 'ts', '{k}', assigner,
    'count(*) AS n, sum(v) AS total', allowed_lateness => '1 hour',
    start => false, retention => 'keep') > 0 AS created
FROM (VALUES ('crowd_one', windowing.tumbling('1 minute')),
             ('crowd_steps', windowing.tumbling('1 minute')),
             ('crowd_sessions', windowing.session('1 minute')),
             ('crowd_sessions_steps', windowing.session('1 minute'))) p(name, assigner);

-- a window for each of 12,000 keys and the NULL key, in one step each
INSERT INTO crowd SELECT k, '2026-01-01 00:00:10+00', k FROM generate_series(1, 12000) k;
INSERT INTO crowd VALUES (NULL, '2026-01-01 00:00:20+00', 5);
SELECT windowing.process('crowd_one') AS one, windowing.process('crowd_sessions') AS sessions;
-- the watermark passes them, 10,000 rows of one key follow (a chunk of rows
-- ends among them), then late rows: 12 windows fire again, and 12 sessions
-- grow and replace the ones that fired
INSERT INTO crowd VALUES (0, '2026-01-01 00:05:00+00', 0);
INSERT INTO crowd SELECT 0, '2026-01-01 00:05:00+00', 0 FROM generate_series(1, 10000);
INSERT INTO crowd SELECT k, '2026-01-01 00:00:40+00', 1 FROM generate_series(1, 12000, 1000) k;
INSERT INTO crowd SELECT k, '2026-01-01 00:01:05+00', 1 FROM generate_series(500, 12000, 1000) k;
INSERT INTO crowd VALUES (NULL, '2026-01-01 00:00:30+00', 1);
SELECT windowing.process('crowd_one') AS one, windowing.process('crowd_sessions') AS sessions;
SELECT count(*) AS windows, sum(n) AS rows_in_windows, sum(total) AS total,
       count(*) FILTER (WHERE fire_count = 2) AS fired_twice,
       count(*) FILTER (WHERE is_final) AS final
FROM crowd_one_results;
-- the 12,001 windows that ended together, more than a step takes out of
-- memory at once, came out in the order of their keys: their rows entered
-- the result table, and its index on (end, key, start), in that order
SELECT count(*) AS out_of_key_order
FROM (SELECT o, lag(o) OVER (ORDER BY ctid) AS before
      FROM (SELECT coalesce(k, 100000) AS o, ctid FROM crowd_one_results
            WHERE window_start = '2026-01-01 00:00:00+00' AND fire_count = 1) r) s
WHERE o < before;
SELECT count(*) AS sessions, sum(n) AS rows_in_sessions, sum(total) AS total,
       count(*) FILTER (WHERE window_end > '2026-01-01 00:01:10+00' AND k <> 0) AS grown,
       count(*) FILTER (WHERE is_final) AS final
FROM crowd_sessions_results;

-- past the lateness, every window leaves, its row final
INSERT INTO crowd VALUES (0, '2026-01-01 02:00:00+00', 0);
SELECT windowing.process('crowd_one') AS one, windowing.process('crowd_sessions') AS sessions;
SELECT count(*) AS windows, count(*) FILTER (WHERE NOT is_final) AS not_final FROM crowd_one_results;
SELECT count(*) AS sessions, count(*) FILTER (WHERE NOT is_final) AS not_final FROM crowd_sessions_results;

-- the same rows in steps of 1000, and what the rows say
DO $$
BEGIN
    WHILE windowing.process('crowd_steps', 1000) > 0 LOOP END LOOP;
    WHILE windowing.process('crowd_sessions_steps', 1000) > 0 LOOP END LOOP;
END $$;
\i sql/include/differences.sql
SELECT a, b, pg_temp.differences(a || '_results', b || '_results',
                                 'k, window_start, window_end, n, total, fire_count, is_final') AS results
FROM (VALUES ('crowd_one', 'crowd_steps'), ('crowd_sessions', 'crowd_sessions_steps')) p(a, b);
CREATE TABLE crowd_expected AS
SELECT k, windowing.tumble_start(ts, '1 minute') AS window_start, count(*) AS n, sum(v) AS total
FROM crowd WHERE ts < '2026-01-01 02:00:00+00' GROUP BY 1, 2;
SELECT count(*) AS differences FROM (
    (SELECT k, window_start, n, total FROM crowd_expected
     EXCEPT ALL SELECT k, window_start, n, total FROM crowd_one_results)
    UNION ALL
    (SELECT k, window_start, n, total FROM crowd_one_results
     EXCEPT ALL SELECT k, window_start, n, total FROM crowd_expected)) d;

-- two key columns, one of them text and sometimes NULL: the rows of
-- windows without a NULL key value are marked final in batches, the
-- others one at a time
CREATE TABLE crowd2 (k int, tag text, ts timestamptz);
SELECT windowing.create_pipeline('crowd2', 'crowd2', 'ts', '{k,tag}', windowing.tumbling('1 minute'),
    'count(*) AS n', allowed_lateness => '1 hour', start => false, retention => 'keep') > 0 AS created;
INSERT INTO crowd2
SELECT i % 12000, CASE WHEN i % 5 = 0 THEN NULL ELSE 'tag ' || i % 7 END, '2026-01-01 00:00:10+00'
FROM generate_series(1, 24000) i;
INSERT INTO crowd2 VALUES (0, 'end', '2026-01-01 00:05:00+00');
SELECT windowing.process('crowd2');
INSERT INTO crowd2 VALUES (0, 'end', '2026-01-01 02:00:00+00');
SELECT windowing.process('crowd2');
SELECT count(*) AS windows, count(*) FILTER (WHERE tag IS NULL) AS null_tags,
       count(*) FILTER (WHERE NOT is_final) AS not_final
FROM crowd2_results;
SELECT count(*) AS differences FROM (
    (SELECT k, tag, n FROM crowd2_results
     EXCEPT ALL SELECT k, tag, count(*) FROM crowd2 WHERE ts < '2026-01-01 02:00:00+00' GROUP BY 1, 2)
    UNION ALL
    (SELECT k, tag, count(*) FROM crowd2 WHERE ts < '2026-01-01 02:00:00+00' GROUP BY 1, 2
     EXCEPT ALL SELECT k, tag, n FROM crowd2_results)) d;
