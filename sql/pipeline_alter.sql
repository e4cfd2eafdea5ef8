-- alter_pipeline: out-of-orderness, allowed lateness and idle timeout
-- change at the next step; the definition the state was made for does not.
-- tumbling(10) on bigint time: with out-of-orderness d, after a row at t
-- the watermark is t - d - 1, and never goes back.
CREATE TABLE ev (ts bigint);
SELECT windowing.create_pipeline('alt', 'ev', 'ts',
    assigner => windowing.tumbling('10 milliseconds'),
    aggregates => 'count(*) AS n, sum(ts) AS total', start => false, retention => 'consume');
-- the watermark, and the results as one line
CREATE TEMP VIEW alt_now AS
SELECT s.watermark_ms AS watermark,
       (SELECT string_agg(format('[%s,%s) n=%s total=%s fires=%s%s', r.window_start, r.window_end,
                                 r.n, r.total, r.fire_count, CASE WHEN r.is_final THEN ' final' END),
                          ', ' ORDER BY r.window_end)
        FROM alt_results r) AS results
FROM windowing.pipeline_stats s WHERE s.name = 'alt';
-- 12 takes the watermark to 11: [0,10) fires
INSERT INTO ev VALUES (1), (5), (12);
SELECT windowing.process('alt');
SELECT * FROM alt_now;

-- out-of-orderness 5: 14 would make it 8, it stays 11, and 14 is on time;
-- 22 makes it 16, where [10,20) is not yet due (with 0 it would be, at 21);
-- 25 makes it 19: [10,20) fires
SELECT windowing.alter_pipeline('alt', max_out_of_orderness => '5 milliseconds');
SELECT max_out_of_orderness, allowed_lateness, idle_timeout FROM windowing.pipeline WHERE name = 'alt';
INSERT INTO ev VALUES (14);
SELECT windowing.process('alt');
SELECT * FROM alt_now;
INSERT INTO ev VALUES (22);
SELECT windowing.process('alt');
SELECT * FROM alt_now;
INSERT INTO ev VALUES (25);
SELECT windowing.process('alt');
SELECT * FROM alt_now;

-- allowed lateness 20 from watermark 19: [0,10) and [10,20) were cleaned
-- up at once (lateness 0), so 3 and 15 stay late although 9 + 20 and
-- 19 + 20 are past the watermark; 36 takes it to 30 and [20,30) fires,
-- alive until 49; 27 is then late by the watermark but within the
-- lateness: [20,30) fires again with it, which lateness 0 would have
-- refused.  An upsert result table gets room for the re-fires.
SELECT reloptions FROM pg_class WHERE oid = 'alt_results'::regclass;
SELECT windowing.alter_pipeline('alt', allowed_lateness => '20 milliseconds');
SELECT allowed_lateness, cleaned_until FROM windowing.pipeline WHERE name = 'alt';
SELECT reloptions FROM pg_class WHERE oid = 'alt_results'::regclass;
INSERT INTO ev VALUES (3), (15);
SELECT windowing.process('alt');
SELECT * FROM alt_now;
INSERT INTO ev VALUES (36);
SELECT windowing.process('alt');
SELECT * FROM alt_now;
INSERT INTO ev VALUES (27);
SELECT windowing.process('alt');
SELECT * FROM alt_now;
SELECT event_time, watermark, reason, missed_windows FROM alt_late ORDER BY event_time;

-- idle timeout, and none again; NULL leaves the rest as it is
SELECT windowing.alter_pipeline('alt', idle_timeout => '1 minute');
SELECT max_out_of_orderness, allowed_lateness, idle_timeout FROM windowing.pipeline WHERE name = 'alt';
SELECT windowing.alter_pipeline('alt', no_idle_timeout => true);
SELECT max_out_of_orderness, allowed_lateness, idle_timeout FROM windowing.pipeline WHERE name = 'alt';

-- refused: what the state was made for, a lower lateness, bad values
SELECT windowing.alter_pipeline('alt', aggregates => 'sum(ts) AS n, sum(ts) AS total');
SELECT windowing.alter_pipeline('alt', key_columns => '{ts}');
SELECT windowing.alter_pipeline('alt', assigner => windowing.tumbling('20 milliseconds'));
SELECT windowing.alter_pipeline('alt', time_column => 'windowing_seq');
SELECT windowing.alter_pipeline('alt', emit => 'append');
SELECT windowing.alter_pipeline('alt', allowed_lateness => '10 milliseconds');
SELECT windowing.alter_pipeline('alt', max_out_of_orderness => '-1 second');
SELECT windowing.alter_pipeline('alt', idle_timeout => '1 month');
SELECT windowing.alter_pipeline('alt', idle_timeout => '1 minute', no_idle_timeout => true);
SELECT windowing.alter_pipeline('nope', allowed_lateness => '1 second');
-- the same values are no change
SELECT windowing.alter_pipeline('alt', aggregates => 'count(*) AS n, sum(ts) AS total', emit => 'upsert',
                                key_columns => '{}', assigner => windowing.tumbling('10 milliseconds'),
                                time_column => 'ts', allowed_lateness => '20 milliseconds');
SELECT max_out_of_orderness, allowed_lateness, idle_timeout, cleaned_until FROM windowing.pipeline WHERE name = 'alt';

-- only its owner (or a superuser) changes a pipeline
CREATE ROLE windowing_alter_stranger;
SET ROLE windowing_alter_stranger;
SELECT windowing.alter_pipeline('alt', allowed_lateness => '1 second');
RESET ROLE;
DROP ROLE windowing_alter_stranger;

-- a definition changed by hand is refused by the next step and by
-- open_windows(), until it is put back
UPDATE windowing.pipeline SET aggregates = 'sum(ts) AS n, count(*) AS total' WHERE name = 'alt';
INSERT INTO ev VALUES (41);
SELECT windowing.process('alt');
SELECT * FROM alt_now;
SELECT * FROM windowing.open_windows('alt');
UPDATE windowing.pipeline SET aggregates = 'count(*) AS n, sum(ts) AS total' WHERE name = 'alt';
SELECT * FROM windowing.open_windows('alt');

-- the row's rules hold for a superuser's hand too
UPDATE windowing.pipeline SET emit = 'both' WHERE name = 'alt';
UPDATE windowing.pipeline SET state = 'stopped' WHERE name = 'alt';
UPDATE windowing.pipeline SET on_error = 'skip' WHERE name = 'alt';
UPDATE windowing.pipeline SET key_groups = 0 WHERE name = 'alt';
UPDATE windowing.pipeline SET join_type = 'cross' WHERE name = 'alt';
UPDATE windowing.pipeline SET join_lower = '0', join_upper = '1 minute' WHERE name = 'alt';
UPDATE windowing.pipeline SET assigner = NULL WHERE name = 'alt';
SELECT emit, state, on_error, key_groups, join_type FROM windowing.pipeline WHERE name = 'alt';

-- a lateness raised on a pipeline of sliding windows kept as slices
CREATE TABLE hops (ts bigint);
SELECT windowing.create_pipeline('hop', 'hops', 'ts',
    assigner => windowing.hopping('20 milliseconds', '10 milliseconds'),
    aggregates => 'count(*) AS n', start => false, retention => 'consume', emit => 'append');
-- 5 and 15, then 31: watermark 30, [-10,10), [0,20) and [10,30) fired
INSERT INTO hops VALUES (5), (15);
SELECT windowing.process('hop');
INSERT INTO hops VALUES (31);
SELECT windowing.process('hop');
SELECT windowing.alter_pipeline('hop', allowed_lateness => '30 milliseconds');
-- 42: watermark 41, [20,40) fires, kept until 69; 25 is late for [10,30)
-- (cleaned up at 30) and fires [20,40) again
INSERT INTO hops VALUES (42);
SELECT windowing.process('hop');
INSERT INTO hops VALUES (25);
SELECT windowing.process('hop');
SELECT sliced FROM windowing.pipeline WHERE name = 'hop';
SELECT window_start, window_end, n, fire_count, is_final FROM hop_results ORDER BY window_end, fire_count;
SELECT event_time, watermark, reason, missed_windows FROM hop_late ORDER BY event_time;

-- local time (timestamp): lateness in microseconds, as for timestamptz
CREATE TABLE local_ev (ts timestamp);
SELECT windowing.create_pipeline('loc', 'local_ev', 'ts', assigner => windowing.tumbling('1 minute'),
    allowed_lateness => '10 seconds', start => false, retention => 'consume');
INSERT INTO local_ev VALUES ('2026-03-29 02:30:00');
SELECT windowing.process('loc');
SELECT windowing.alter_pipeline('loc', allowed_lateness => '5 minutes');
-- the watermark (02:30 less 1 microsecond) less the old 10 seconds
SELECT windowing._as_timestamp(cleaned_until) FROM windowing.pipeline WHERE name = 'loc';
-- [02:28, 02:29) was cleaned up under the old lateness: 02:28:30 stays
-- late; [02:29, 02:30) was not: 02:29:55 fires it; 02:30:20 joins [02:30, 02:31)
INSERT INTO local_ev VALUES ('2026-03-29 02:28:30'), ('2026-03-29 02:29:55'), ('2026-03-29 02:30:20');
SELECT windowing.process('loc');
SELECT event_time, reason FROM loc_late;
SELECT windowing.flush('loc');
SELECT window_start, count FROM loc_results ORDER BY window_start;

-- A process analyses a select list once and keeps it until the catalogs
-- change: a function dropped and made again (a new OID) is found anew.
SELECT windowing.create_queue('scaled_ev', 'k int, ts bigint, v int') IS NOT NULL;
CREATE FUNCTION scaled(v int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT v * 2';
SELECT windowing.create_pipeline('sc', 'scaled_ev', 'ts', '{k}', windowing.tumbling('10 milliseconds'),
       'count(*) AS n, sum(public.scaled(v)) AS s', start => false) > 0;
INSERT INTO scaled_ev (k, ts, v) VALUES (1, 1, 5);
SELECT windowing.process('sc');
SELECT * FROM windowing.open_windows('sc');
DROP FUNCTION scaled(int);
CREATE FUNCTION scaled(v int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT v * 3';
INSERT INTO scaled_ev (k, ts, v) VALUES (1, 2, 5);
SELECT windowing.process('sc');
SELECT * FROM windowing.open_windows('sc');
-- and so is a column renamed, away and back
ALTER TABLE scaled_ev RENAME COLUMN v TO w;
INSERT INTO scaled_ev (k, ts, w) VALUES (1, 3, 5);
SELECT windowing.process('sc');
ALTER TABLE scaled_ev RENAME COLUMN w TO v;
SELECT windowing.process('sc');
SELECT * FROM windowing.open_windows('sc');

DROP VIEW alt_now;
SELECT windowing.drop_pipeline(name, drop_tables => true) FROM windowing.pipelines;
DROP TABLE ev, hops, local_ev, scaled_ev;
DROP FUNCTION scaled(int);
