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

-- Batches of rows in a shuffled order (some of them far behind); as they
-- come, each pipeline's state is sometimes forgotten (as after a restart),
-- its steps sometimes read a few rows at a time, and its input is
-- sometimes idle long enough for the watermark to pass every window:
-- every window ends as the GROUP BY of its rows.
CREATE TABLE shuffled (k int, ts timestamptz, v int);
SELECT windowing.create_pipeline('shuffled_' || kind, 'shuffled', 'ts', '{k}', assigner,
    'count(*) AS n, sum(v) AS total', allowed_lateness => '100 days',
    idle_timeout => '1 minute', start => false, retention => 'keep') > 0
FROM (VALUES ('s', windowing.session('3 minutes')), ('t', windowing.tumbling('1 minute')),
             ('h', windowing.hopping('2 minutes', '1 minute'))) a(kind, assigner);
\i sql/include/shuffled_step.sql
SELECT setseed(0.1);
CREATE TEMP TABLE batches AS
SELECT b, row_number() OVER (ORDER BY b + CASE WHEN random() < 0.15 THEN random() * 150
                                              ELSE random() * 3 END) AS ord
FROM generate_series(0, 149) b;
CREATE PROCEDURE pg_temp.shuffle() LANGUAGE plpgsql AS $$
DECLARE
    r record;
    p text;
    newest int := 0;
BEGIN
    FOR r IN SELECT b FROM batches ORDER BY ord LOOP
        INSERT INTO shuffled SELECT g % 97, '2026-01-01 00:00+00'::timestamptz + g * interval '1 second', g
        FROM generate_series(r.b * 40 + 1, r.b * 40 + 40) g;
        newest := greatest(newest, r.b);
        COMMIT;
        FOREACH p IN ARRAY ARRAY['shuffled_s', 'shuffled_t', 'shuffled_h'] LOOP
            CALL pg_temp.shuffled_step(p, '2026-01-01 00:00+00'::timestamptz
                                          + (newest * 40 + 40) * interval '1 second',
                                       r.b < newest, 0, 0.5);
        END LOOP;
        COMMIT;
    END LOOP;
END
$$;
CALL pg_temp.shuffle();
RESET windowing.clock;
-- a row of every key past every window closes them
INSERT INTO shuffled SELECT g, '2027-01-01 00:00+00', 0 FROM generate_series(0, 96) g;
SELECT windowing.process(name) FROM windowing.pipeline WHERE name LIKE 'shuffled\__' ORDER BY name;
CREATE TEMP TABLE windows_got AS
SELECT 's' AS p, k, window_start, n, total FROM shuffled_s_results
UNION ALL SELECT 't', k, window_start, n, total FROM shuffled_t_results
UNION ALL SELECT 'h', k, window_start, n, total FROM shuffled_h_results;
CREATE TEMP TABLE windows_want AS
SELECT 's' AS p, k, (s).window_start, count(*) AS n, sum(v) AS total
FROM (SELECT k, v, windowing.session(ts, '3 minutes') OVER (PARTITION BY k) AS s
      FROM shuffled WHERE ts < '2027-01-01 00:00+00') x
GROUP BY 1, 2, 3
UNION ALL SELECT 't', k, windowing.tumble_start(ts, '1 minute'), count(*), sum(v)
FROM shuffled WHERE ts < '2027-01-01 00:00+00' GROUP BY 1, 2, 3
UNION ALL SELECT 'h', k, w.window_start, count(*), sum(v)
FROM shuffled, windowing.hop(ts, '2 minutes', '1 minute') w WHERE ts < '2027-01-01 00:00+00' GROUP BY 1, 2, 3;
SELECT p, count(*) AS windows,
       count(*) FILTER (WHERE (p, k, window_start, n, total) NOT IN (TABLE windows_want)) AS wrong
FROM windows_got WHERE window_start < '2027-01-01 00:00+00' GROUP BY p ORDER BY p;
SELECT count(*) AS missing FROM ((TABLE windows_want)
    EXCEPT ALL (SELECT * FROM windows_got WHERE window_start < '2027-01-01 00:00+00')) m;
-- what state_size says of window_state after all of that
\i sql/include/state_size.sql
SELECT count(*) AS sized, pg_temp.state_size_wrong() AS wrong_sizes
FROM windowing.state_size WHERE windows > 0;
SELECT windowing.drop_pipeline(name, true) FROM windowing.pipeline WHERE name LIKE 'shuffled\__' ORDER BY name;
DROP TABLE shuffled;
