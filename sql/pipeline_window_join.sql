-- Window join pipelines: the pairs of rows of a key in the same window,
-- worked by hand.
\set SHOW_CONTEXT never
SET client_min_messages = warning;
SELECT windowing.create_queue('wj_clicks', 'ad int, ts bigint, who text');
SELECT windowing.create_queue('wj_views', 'ad int, ts bigint, page text');

-- tumbling windows of 10 ms, inner join, no lateness: a pair is written
-- when its window fires, once the join's watermark (the smaller of the
-- inputs') reaches window_end - 1
SELECT windowing.create_window_join_pipeline('wj_tumble', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.ad, wj_clicks.who, wj_views.page',
    windowing.tumbling('10 milliseconds'), max_out_of_orderness => '2 milliseconds');
\d wj_tumble_results
-- out of order on both sides; click (1, 12) and view (1, 8) share a key
-- but not a window; ad 2 has no view
INSERT INTO wj_clicks VALUES (1, 5, 'ann'), (1, 3, 'bob'), (2, 4, 'cid'), (1, 12, 'dan');
INSERT INTO wj_views VALUES (1, 8, 'home'), (1, 1, 'shop'), (1, 14, 'news');
SELECT windowing.process('wj_tumble');
-- the clicks' watermark is 12 - 2 - 1 = 9, the views' 14 - 2 - 1 = 11: the
-- join's is 9, the max timestamp of [0, 10), which fires
SELECT watermark, windows_fired FROM windowing.pipeline_stats WHERE name = 'wj_tumble';
SELECT * FROM wj_tumble_results ORDER BY 1, 3, 4, 5;
-- [10, 20) waits; [0, 10) is gone
SELECT ad, ts, windowing_start, windowing_end FROM wj_tumble_left_state ORDER BY ts;
SELECT ad, ts, windowing_start, windowing_end FROM wj_tumble_right_state ORDER BY ts;
-- a view for [0, 10) now is late (9 is its max timestamp, and there is no
-- allowed lateness): it goes to the late table with its side
INSERT INTO wj_views VALUES (1, 7, 'late');
INSERT INTO wj_clicks VALUES (1, 25, 'eve');
SELECT windowing.process('wj_tumble');
SELECT * FROM wj_tumble_results ORDER BY 1, 3, 4, 5;
SELECT side, event_time, watermark, reason, missed_windows, row_data FROM wj_tumble_late;
SELECT windowing.flush('wj_tumble');
SELECT * FROM wj_tumble_results ORDER BY 1, 3, 4, 5;
SELECT count(*) FROM wj_tumble_left_state;
SELECT rows_consumed, windows_fired, late_routed, open_windows, memory_windows, heap_windows,
       state_memory_bytes, state_spilled_bytes > 0 AS state_tables
FROM windowing.pipeline_stats WHERE name = 'wj_tumble';
SELECT windowing.drop_pipeline('wj_tumble', drop_tables => true);
DELETE FROM wj_clicks;
DELETE FROM wj_views;

-- the same rows in one step or in one step per row give the same pairs
CREATE PROCEDURE pg_temp.feed(step text) LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM (VALUES
        ('c', 1, 1, 'a'), ('v', 1, 4, 'x'), ('v', 2, 6, 'y'), ('c', 2, 9, 'b'),
        ('c', 1, 11, 'c'), ('v', 1, 2, 'z'), ('v', 1, 13, 'w'), ('c', 2, 3, 'd'))
        AS t(side, ad, ts, v) LOOP
        IF r.side = 'c' THEN
            INSERT INTO wj_clicks VALUES (r.ad, r.ts, r.v);
        ELSE
            INSERT INTO wj_views VALUES (r.ad, r.ts, r.v);
        END IF;
        IF step IS NOT NULL THEN
            COMMIT;
            PERFORM windowing.process(step);
        END IF;
    END LOOP;
END
$$;
SELECT windowing.create_window_join_pipeline('wj_once', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.who, wj_views.page',
    windowing.tumbling('10 milliseconds'), max_out_of_orderness => '10 milliseconds');
-- and in steps of at most 3 rows of each queue, the rest of a tick left
-- to the next step
SELECT windowing.create_window_join_pipeline('wj_chunks', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.who, wj_views.page',
    windowing.tumbling('10 milliseconds'), max_out_of_orderness => '10 milliseconds');
CALL pg_temp.feed(NULL);
SELECT windowing.process('wj_once');
SELECT windowing.flush('wj_once');
SELECT * FROM wj_once_results ORDER BY 1, 3, 4;
SELECT windowing.process('wj_chunks', max_rows => 3);
SELECT side, tick_hi IS NOT NULL AS tick_open, rows_consumed FROM windowing.join_input
WHERE pipeline_id = (SELECT id FROM windowing.pipeline WHERE name = 'wj_chunks') ORDER BY side;
SELECT windowing.process('wj_chunks', max_rows => 3) FROM generate_series(1, 2);
SELECT side, tick_hi IS NOT NULL AS tick_open, rows_consumed FROM windowing.join_input
WHERE pipeline_id = (SELECT id FROM windowing.pipeline WHERE name = 'wj_chunks') ORDER BY side;
SELECT windowing.flush('wj_chunks');
SELECT count(*) AS differences FROM (
    (TABLE wj_once_results EXCEPT ALL TABLE wj_chunks_results)
    UNION ALL (TABLE wj_chunks_results EXCEPT ALL TABLE wj_once_results)) d;
SELECT windowing.drop_pipeline('wj_chunks', drop_tables => true);
SELECT windowing.drop_pipeline('wj_once');
DELETE FROM wj_clicks;
DELETE FROM wj_views;
SELECT windowing.create_window_join_pipeline('wj_each', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.who, wj_views.page',
    windowing.tumbling('10 milliseconds'), max_out_of_orderness => '10 milliseconds');
CALL pg_temp.feed('wj_each');
SELECT windowing.flush('wj_each');
SELECT rows_consumed, steps > 8 AS one_step_a_row FROM windowing.pipeline_stats WHERE name = 'wj_each';
SELECT count(*) AS differences FROM (
    (TABLE wj_once_results EXCEPT ALL TABLE wj_each_results)
    UNION ALL (TABLE wj_each_results EXCEPT ALL TABLE wj_once_results)) d;
DROP TABLE wj_once_results, wj_once_late;
SELECT windowing.drop_pipeline('wj_each', drop_tables => true);
DELETE FROM wj_clicks;
DELETE FROM wj_views;

-- allowed lateness: [0, 10) fires at watermark 9 and stays until 9 + 5; a
-- view late for it but within the lateness makes it fire again with the
-- pairs it makes, and only those: each pair is written once
SELECT windowing.create_window_join_pipeline('wj_late', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.who, wj_views.page',
    windowing.tumbling('10 milliseconds'), allowed_lateness => '5 milliseconds');
INSERT INTO wj_clicks VALUES (1, 2, 'ann'), (1, 6, 'bob'), (1, 11, 'cid');
INSERT INTO wj_views VALUES (1, 4, 'home'), (1, 10, 'news');
SELECT windowing.process('wj_late');
SELECT * FROM wj_late_results ORDER BY 1, 3, 4;
-- the watermark stays at 9: a late view re-fires [0, 10) in the same step
INSERT INTO wj_views VALUES (1, 7, 'shop');
SELECT windowing.process('wj_late');
SELECT * FROM wj_late_results ORDER BY 1, 3, 4;
-- a late click pairs with both views: the two pairs are new
INSERT INTO wj_clicks VALUES (1, 9, 'dan');
SELECT windowing.process('wj_late');
SELECT * FROM wj_late_results ORDER BY 1, 3, 4;
SELECT ad, ts, windowing_fired FROM wj_late_left_state ORDER BY ts;
-- at watermark 14, [0, 10) leaves: a view for it then is late
INSERT INTO wj_clicks VALUES (1, 15, 'eve');
INSERT INTO wj_views VALUES (1, 16, 'blog');
SELECT windowing.process('wj_late');
INSERT INTO wj_views VALUES (1, 8, 'too late');
SELECT windowing.process('wj_late');
SELECT side, event_time, watermark, reason FROM wj_late_late;
SELECT ad, ts FROM wj_late_left_state ORDER BY ts;
SELECT windowing.flush('wj_late');
SELECT * FROM wj_late_results ORDER BY 1, 3, 4;
SELECT windowing.drop_pipeline('wj_late', drop_tables => true);
DELETE FROM wj_clicks;
DELETE FROM wj_views;

-- hopping windows of 10 ms every 5: a pair of rows 3 ms apart meets in
-- one or two windows, each written with its window; late rows dropped and
-- counted, not routed
SELECT windowing.create_window_join_pipeline('wj_hop', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.ts AS click_ts, wj_views.ts AS view_ts',
    windowing.hopping('10 milliseconds', '5 milliseconds'), late_table => '');
INSERT INTO wj_clicks VALUES (1, 6, 'a'), (1, 13, 'b');
INSERT INTO wj_views VALUES (1, 9, 'x'), (1, 4, 'y'), (1, 30, 'z');
SELECT windowing.process('wj_hop');
-- at watermark 12 both windows of a view at 1 are past: it is late
INSERT INTO wj_views VALUES (1, 1, 'late');
SELECT windowing.process('wj_hop');
SELECT windowing.flush('wj_hop');
SELECT * FROM wj_hop_results ORDER BY 1, 3, 4;
SELECT to_regclass('wj_hop_late') IS NULL AS no_late_table, late_dropped
FROM windowing.pipeline_stats WHERE name = 'wj_hop';
SELECT windowing.drop_pipeline('wj_hop', drop_tables => true);
DELETE FROM wj_clicks;
DELETE FROM wj_views;

-- outer joins: a row of a window where the other side has none is written
-- with the other side NULL, once the window leaves (window_end - 1 +
-- allowed lateness), since until then a row may come to meet it
SELECT windowing.create_window_join_pipeline('wj_full', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'c.ad AS click_ad, c.ts AS click_ts, v.ad AS view_ad, v.ts AS view_ts',
    windowing.tumbling('10 milliseconds'), join_type => 'full', allowed_lateness => '10 milliseconds',
    left_alias => 'c', right_alias => 'v');
SELECT windowing.create_window_join_pipeline('wj_left', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.ts AS click_ts, wj_views.ts AS view_ts',
    windowing.tumbling('10 milliseconds'), join_type => 'left');
SELECT windowing.create_window_join_pipeline('wj_right', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.ts AS click_ts, wj_views.ts AS view_ts',
    windowing.tumbling('10 milliseconds'), join_type => 'right');
INSERT INTO wj_clicks VALUES (1, 1, 'a'), (2, 2, 'b'), (1, 12, 'c'), (1, 25, 'd');
INSERT INTO wj_views VALUES (1, 3, 'x'), (3, 4, 'y'), (1, 25, 'z');
SELECT windowing.process('wj_full'), windowing.process('wj_left'), windowing.process('wj_right');
-- at watermark 24, [0, 10) and [10, 20) fired.  [0, 10) left too (its
-- cleanup time is 19), so the full join wrote its rows that met nothing;
-- [10, 20) stays until 29, and click 12 waits.  Without lateness, the left
-- and right joins wrote theirs at once
SELECT * FROM wj_full_results ORDER BY 1, 2, 3, 4, 5, 6;
SELECT * FROM wj_left_results ORDER BY 1, 3, 4;
SELECT * FROM wj_right_results ORDER BY 1, 3, 4;
-- within the lateness of [10, 20), click 12 meets a view after all
INSERT INTO wj_views VALUES (1, 15, 'w');
SELECT windowing.process('wj_full');
SELECT windowing.flush('wj_full');
SELECT * FROM wj_full_results ORDER BY 1, 2, 3, 4, 5, 6;
SELECT windowing.drop_pipeline('wj_full', drop_tables => true);
SELECT windowing.drop_pipeline('wj_left', drop_tables => true);
SELECT windowing.drop_pipeline('wj_right', drop_tables => true);
DELETE FROM wj_clicks;
DELETE FROM wj_views;

-- cumulating windows on timestamptz, laid on a time zone's days: steps of
-- 12 hours up to a day in Asia/Tokyo, so the windows start at 15:00 UTC
SELECT windowing.create_queue('wj_orders', 'shop int, ts timestamptz, amount int');
SELECT windowing.create_queue('wj_refunds', 'shop int, ts timestamptz, amount int');
SELECT windowing.create_window_join_pipeline('wj_day', 'wj_orders', 'ts', '{shop}',
    'wj_refunds', 'ts', '{shop}', 'o.amount AS ordered, r.amount AS refunded',
    windowing.cumulating('12 hours', '1 day', tz => 'Asia/Tokyo'), left_alias => 'o', right_alias => 'r');
SET timezone = 'Asia/Tokyo';
INSERT INTO wj_orders VALUES (1, '2026-03-01 08:00', 100), (1, '2026-03-01 20:00', 200);
INSERT INTO wj_refunds VALUES (1, '2026-03-01 10:00', 30);
SELECT windowing.process('wj_day');
SELECT windowing.flush('wj_day');
SELECT * FROM wj_day_results ORDER BY 1, 2, 3, 4;
RESET timezone;
SELECT windowing.drop_pipeline('wj_day', drop_tables => true);

-- session windows of 5 ms, merging across both inputs: a row's window is
-- [ts, ts + 5) until it overlaps or touches another of its key, on either
-- side.  With allowed lateness, a late row merges into a fired session and
-- fires it again with the pairs it makes, written with the session's new
-- bounds; pairs written before keep theirs
SELECT windowing.create_window_join_pipeline('wj_sess', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.who, wj_views.page',
    windowing.session('5 milliseconds'), allowed_lateness => '20 milliseconds', join_type => 'full');
SELECT windowing.create_window_join_pipeline('wj_sess_n', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'count(wj_clicks.who) AS clicks, count(wj_views.page) AS views',
    windowing.session('5 milliseconds'), allowed_lateness => '20 milliseconds', join_type => 'full');
-- click 1 [1, 6) and view 3 [3, 8) merge into [1, 8); click 20 and view
-- 30 stand alone
INSERT INTO wj_clicks VALUES (1, 1, 'a1'), (1, 20, 'a20');
INSERT INTO wj_views VALUES (1, 3, 'b3'), (1, 30, 'b30');
SELECT windowing.process('wj_sess'), windowing.process('wj_sess_n');
-- at watermark 19, [1, 8) fired
SELECT * FROM wj_sess_results ORDER BY 1, 3, 4;
SELECT ad, ts, windowing_start, windowing_end, windowing_fired FROM wj_sess_left_state ORDER BY ts;
-- click 6 is late for its own window?  No: [6, 11) is within the
-- lateness; it touches [1, 8), which grows to [1, 11) and fires again
INSERT INTO wj_clicks VALUES (1, 6, 'a6');
SELECT windowing.process('wj_sess'), windowing.process('wj_sess_n');
SELECT * FROM wj_sess_results ORDER BY 1, 3, 4;
-- view 9 grows it to [1, 14); view 15 [15, 20) touches click 20's
-- [20, 25): [15, 25), not fired yet
INSERT INTO wj_views VALUES (1, 15, 'b15'), (1, 9, 'b9');
SELECT windowing.process('wj_sess'), windowing.process('wj_sess_n');
SELECT * FROM wj_sess_results ORDER BY 1, 3, 4;
SELECT ad, ts, windowing_start, windowing_end, windowing_fired FROM wj_sess_right_state ORDER BY ts;
SELECT * FROM windowing.open_windows('wj_sess');
-- the aggregates of each session, replaced as it grew: a session that
-- merged into a bigger one leaves its row to the bigger one's
SELECT * FROM wj_sess_n_results ORDER BY 1, 2;
-- at watermark 33 [1, 14) leaves; a click at 2 only touches it, and is late
INSERT INTO wj_clicks VALUES (1, 34, 'a34');
INSERT INTO wj_views VALUES (1, 40, 'b40');
SELECT windowing.process('wj_sess'), windowing.process('wj_sess_n');
INSERT INTO wj_clicks VALUES (1, 2, 'late');
SELECT windowing.process('wj_sess'), windowing.process('wj_sess_n');
SELECT side, event_time, watermark, reason, missed_windows FROM wj_sess_late;
SELECT windowing.flush('wj_sess'), windowing.flush('wj_sess_n');
SELECT * FROM wj_sess_results ORDER BY 1, 3, 4;
SELECT * FROM wj_sess_n_results ORDER BY 1, 2;
SELECT windowing.drop_pipeline('wj_sess', drop_tables => true);
SELECT windowing.drop_pipeline('wj_sess_n', drop_tables => true);
DELETE FROM wj_clicks;
DELETE FROM wj_views;

-- aggregates over each window's pairs: one row per key and window, with
-- the left keys and the window, written when it fires and replaced when a
-- late row makes it fire again
SELECT windowing.create_queue('wj_buys', 'usr int, ts bigint, amount int');
SELECT windowing.create_queue('wj_pays', 'usr int, ts bigint, paid int');
SELECT windowing.create_window_join_pipeline('wj_rev', 'wj_buys', 'ts', '{usr}', 'wj_pays', 'ts', '{usr}',
    'sum(wj_buys.amount) AS ordered, sum(wj_pays.paid) AS paid, count(*) AS pairs',
    windowing.tumbling('10 milliseconds'), allowed_lateness => '5 milliseconds');
-- over a full join, Flink's coGroup: each window's rows of both sides,
-- one side possibly empty
SELECT windowing.create_window_join_pipeline('wj_cog', 'wj_buys', 'ts', '{usr}', 'wj_pays', 'ts', '{usr}',
    'count(wj_buys.amount) AS buys, count(wj_pays.paid) AS pays',
    windowing.tumbling('10 milliseconds'), join_type => 'full');
\d wj_rev_results
INSERT INTO wj_buys VALUES (1, 1, 10), (1, 2, 20), (2, 3, 5), (1, 12, 7);
INSERT INTO wj_pays VALUES (1, 4, 30), (3, 5, 1), (1, 13, 7);
SELECT windowing.process('wj_rev'), windowing.process('wj_cog');
-- watermark 11: [0, 10) fired; users 2 and 3 have no pairs there
SELECT * FROM wj_rev_results ORDER BY 1, 2;
SELECT * FROM wj_cog_results ORDER BY 1, 2;
-- what [10, 20) would write now
SELECT * FROM windowing.open_windows('wj_rev');
SELECT * FROM windowing.open_windows('wj_cog');
-- a late payment for [0, 10), within the lateness: two more pairs, and
-- the row of [0, 10) is written again over all four
INSERT INTO wj_pays VALUES (1, 6, 100);
SELECT windowing.process('wj_rev');
SELECT * FROM wj_rev_results ORDER BY 1, 2;
SELECT windowing.flush('wj_rev'), windowing.flush('wj_cog');
SELECT * FROM wj_rev_results ORDER BY 1, 2;
SELECT * FROM wj_cog_results ORDER BY 1, 2;
SELECT emit FROM windowing.pipelines WHERE name = 'wj_rev';
-- a select list that mixes aggregates with other columns, or names a
-- column as a key is named, is refused
SELECT windowing.create_window_join_pipeline('wj_bad', 'wj_buys', 'ts', '{usr}', 'wj_pays', 'ts', '{usr}',
    'count(*), wj_pays.paid', windowing.tumbling('10 milliseconds'));
SELECT windowing.create_window_join_pipeline('wj_bad', 'wj_buys', 'ts', '{usr}', 'wj_pays', 'ts', '{usr}',
    'count(*) AS usr', windowing.tumbling('10 milliseconds'));
-- an existing result table needs the unique index an upsert goes by
CREATE TABLE wj_mine (usr int, window_start bigint, window_end bigint, n bigint);
SELECT windowing.create_window_join_pipeline('wj_bad', 'wj_buys', 'ts', '{usr}', 'wj_pays', 'ts', '{usr}',
    'count(*) AS n', windowing.tumbling('10 milliseconds'), result_table => 'wj_mine');
CREATE UNIQUE INDEX ON wj_mine (window_end, usr, window_start) NULLS NOT DISTINCT;
SELECT windowing.create_window_join_pipeline('wj_mine', 'wj_buys', 'ts', '{usr}', 'wj_pays', 'ts', '{usr}',
    'count(*) AS n', windowing.tumbling('10 milliseconds'), result_table => 'wj_mine');
SELECT windowing.process('wj_mine');
SELECT windowing.flush('wj_mine');
SELECT * FROM wj_mine ORDER BY 1, 2;
SELECT windowing.drop_pipeline(name, drop_tables => true) FROM windowing.pipelines
WHERE name IN ('wj_rev', 'wj_cog', 'wj_mine') ORDER BY name;

-- an idle input: views stop coming, and after idle_timeout their
-- watermark follows the clock, so the clicks' windows fire without them
SELECT windowing.create_queue('wj_taps', 'ad int, ts timestamptz');
SELECT windowing.create_queue('wj_seen', 'ad int, ts timestamptz');
SELECT windowing.create_window_join_pipeline('wj_idle', 'wj_taps', 'ts', '{ad}', 'wj_seen', 'ts', '{ad}',
    'wj_taps.ts AS tapped, wj_seen.ts AS seen', windowing.tumbling('1 minute'), join_type => 'left',
    idle_timeout => '5 minutes');
SET windowing.clock = '2026-01-02 00:00+00';
INSERT INTO wj_taps VALUES (1, '2026-01-02 00:00:10+00'), (2, '2026-01-02 00:00:20+00');
INSERT INTO wj_seen VALUES (1, '2026-01-02 00:00:30+00');
SELECT windowing.process('wj_idle');
SET windowing.clock = '2026-01-02 00:03+00';
INSERT INTO wj_taps VALUES (3, '2026-01-02 00:02:00+00');
SELECT windowing.process('wj_idle');
-- the views' watermark (00:00:29.999999) holds [00:00, 00:01) back
SELECT * FROM wj_idle_results;
SET windowing.clock = '2026-01-02 00:06+00';
SELECT windowing.process('wj_idle');
-- quiet for 5 minutes, the views follow the clock: the join's watermark is
-- the taps' (00:01:59.999999), [00:00, 00:01) fires and leaves
SELECT tapped, seen FROM wj_idle_results ORDER BY tapped;
SELECT watermark_time FROM windowing.pipeline_stats WHERE name = 'wj_idle';
RESET windowing.clock;
SELECT windowing.drop_pipeline('wj_idle', drop_tables => true);

-- transactions: a step rolled back by a savepoint leaves nothing behind
SELECT windowing.create_window_join_pipeline('wj_tx', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.who, wj_views.page',
    windowing.tumbling('10 milliseconds'));
INSERT INTO wj_clicks VALUES (1, 1, 'ann'), (1, 20, 'bob');
INSERT INTO wj_views VALUES (1, 2, 'home'), (1, 20, 'news');
BEGIN;
SAVEPOINT s;
SELECT windowing.process('wj_tx');
SELECT * FROM wj_tx_results;
ROLLBACK TO SAVEPOINT s;
SELECT * FROM wj_tx_results;
SELECT count(*) FROM wj_tx_left_state;
COMMIT;
SELECT windowing.process('wj_tx');
SELECT * FROM wj_tx_results;
SELECT name, assigner_text, join_type, join_lower, allowed_lateness, aggregates
FROM windowing.pipelines WHERE name = 'wj_tx';
-- open_windows: the windows that have not fired, each with the pairs it
-- would write if it fired now (none while one side has no rows)
INSERT INTO wj_clicks VALUES (1, 31, 'cid'), (2, 32, 'dan');
INSERT INTO wj_views VALUES (1, 35, 'blog'), (1, 36, 'shop');
SELECT * FROM windowing.open_windows('wj_tx');
SELECT windowing.process('wj_tx');
SELECT * FROM windowing.open_windows('wj_tx');
SELECT * FROM wj_tx_results ORDER BY 1, 3, 4;
-- what aggregate pipelines have and joins do not, refused clearly
SELECT windowing.alter_pipeline('wj_tx', allowed_lateness => '1 second');

-- a role that is no superuser makes, steps and reads a window join of its
-- own queues, in steps that read part of a tick
CREATE ROLE wj_owner;
GRANT USAGE, CREATE ON SCHEMA public TO wj_owner;
SET ROLE wj_owner;
SELECT windowing.create_queue('wj_mine_l', 'k int, ts bigint');
SELECT windowing.create_queue('wj_mine_r', 'k int, ts bigint');
SELECT windowing.create_window_join_pipeline('wj_own', 'wj_mine_l', 'ts', '{k}', 'wj_mine_r', 'ts', '{k}',
    'count(*) AS n', windowing.session('5 milliseconds'), join_type => 'full',
    allowed_lateness => '5 milliseconds') > 0 AS created;
INSERT INTO wj_mine_l VALUES (1, 1), (1, 30), (2, 3);
INSERT INTO wj_mine_r VALUES (1, 2), (2, 40);
SELECT windowing.process('wj_own', max_rows => 2);
SELECT * FROM windowing.open_windows('wj_own');
SELECT windowing.process('wj_own');
SELECT windowing.flush('wj_own');
SELECT * FROM wj_own_results ORDER BY 1, 2;
SELECT windowing.drop_pipeline('wj_own', drop_tables => true);
DROP TABLE wj_mine_l, wj_mine_r;
RESET ROLE;
REVOKE USAGE, CREATE ON SCHEMA public FROM wj_owner;
DROP ROLE wj_owner;

-- definitions refused
SELECT windowing.create_window_join_pipeline('wj_bad', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.who', windowing.session_dynamic('gap'));
SELECT windowing.create_window_join_pipeline('wj_bad', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.who', windowing.counting(5));
SELECT windowing.create_window_join_pipeline('wj_bad', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.who', NULL);
SELECT windowing.create_window_join_pipeline('wj_bad', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.who', windowing.tumbling('1 second'),
    allowed_lateness => NULL);
SELECT windowing.create_window_join_pipeline('wj_bad', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.who', windowing.tumbling('1 second'),
    allowed_lateness => '-1 second');
SELECT windowing.create_window_join_pipeline('wj_bad', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.who', windowing.tumbling('1 day', tz => 'UTC'));
SELECT windowing.create_window_join_pipeline('wj_bad', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.who', windowing.tumbling('0.5 milliseconds'));
SELECT windowing.create_window_join_pipeline('wj_bad', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.ts AS window_start', windowing.tumbling('1 second'));
-- alter_pipeline refuses what create refuses: an idle timeout on local time
SELECT windowing.create_queue('wj_local_l', 'k int, ts timestamp');
SELECT windowing.create_queue('wj_local_r', 'k int, ts timestamp');
SELECT windowing.create_window_join_pipeline('wj_local', 'wj_local_l', 'ts', '{k}', 'wj_local_r', 'ts', '{k}',
    'wj_local_l.k', windowing.tumbling('1 minute')) > 0 AS created;
SELECT windowing.alter_pipeline('wj_local', idle_timeout => '1 minute');
SELECT windowing.drop_pipeline('wj_local', drop_tables => true);
DROP TABLE wj_local_l, wj_local_r;
SELECT to_regclass('wj_bad_results') IS NULL AS nothing_made;
SELECT windowing.drop_pipeline('wj_tx', drop_tables => true);

DELETE FROM wj_clicks;
DELETE FROM wj_views;
-- a hopping row late for one of its windows and on time for the other
-- meets rows in the live one, and goes to the late table with the window
-- it missed (Flink drops it from that window without a word); a late table
-- without missed_windows (as made before 0.19) gets only the rows late for
-- every window
SELECT windowing.create_window_join_pipeline('wj_part', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.ts AS click_ts, wj_views.ts AS view_ts',
    windowing.hopping('10 milliseconds', '5 milliseconds')) > 0 AS created;
\d wj_part_late
CREATE TABLE wj_old_late (routed_at timestamptz NOT NULL DEFAULT now(), side text NOT NULL,
    event_time bigint, watermark bigint, reason text NOT NULL, row_data jsonb NOT NULL);
SELECT windowing.create_window_join_pipeline('wj_old', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.ts AS click_ts, wj_views.ts AS view_ts',
    windowing.hopping('10 milliseconds', '5 milliseconds'), late_table => 'wj_old_late') > 0 AS created;
INSERT INTO wj_clicks VALUES (1, 6, 'a'), (1, 13, 'b');
INSERT INTO wj_views VALUES (1, 30, 'z');
SELECT windowing.process('wj_part'), windowing.process('wj_old');
-- at watermark 12: view 8 is in [0, 10), past, and [5, 15), live; view 3
-- is in [-5, 5) and [0, 10), both past
INSERT INTO wj_views VALUES (1, 8, 'p'), (1, 3, 'q');
SELECT windowing.process('wj_part'), windowing.process('wj_old');
SELECT side, event_time, watermark, reason, missed_windows, row_data FROM wj_part_late ORDER BY event_time;
SELECT side, event_time, watermark, reason, row_data FROM wj_old_late ORDER BY event_time;
SELECT late_routed FROM windowing.pipeline_stats WHERE name IN ('wj_part', 'wj_old') ORDER BY name;
SELECT windowing.flush('wj_part'), windowing.flush('wj_old');
SELECT * FROM wj_part_results ORDER BY 1, 3, 4;
SELECT count(*) AS same FROM (SELECT * FROM wj_part_results INTERSECT SELECT * FROM wj_old_results) s;
SELECT windowing.drop_pipeline('wj_part', drop_tables => true);
SELECT windowing.drop_pipeline('wj_old', drop_tables => true);
-- a missed_windows column of another type does not fit
CREATE TABLE wj_odd_late (routed_at timestamptz NOT NULL DEFAULT now(), side text NOT NULL,
    event_time bigint, watermark bigint, reason text NOT NULL, missed_windows int[],
    row_data jsonb NOT NULL);
SELECT windowing.create_window_join_pipeline('wj_odd', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.ts AS click_ts, wj_views.ts AS view_ts',
    windowing.hopping('10 milliseconds', '5 milliseconds'), late_table => 'wj_odd_late');
DROP TABLE wj_odd_late;


-- hopping windows shorter than their slide leave gaps: a row in one
-- belongs to no window; on time it is dropped, as Flink drops it, and once
-- behind the watermark it is late, 'between windows'
DELETE FROM wj_clicks;
DELETE FROM wj_views;
SELECT windowing.create_window_join_pipeline('wj_gap', 'wj_clicks', 'ts', '{ad}',
    'wj_views', 'ts', '{ad}', 'wj_clicks.ts AS click_ts, wj_views.ts AS view_ts',
    windowing.hopping('5 milliseconds', '10 milliseconds')) > 0 AS created;
INSERT INTO wj_clicks VALUES (1, 1, 'a'), (1, 7, 'gap'), (1, 12, 'b');
INSERT INTO wj_views VALUES (1, 2, 'x'), (1, 13, 'y'), (1, 40, 'z');
SELECT windowing.process('wj_gap');
-- at watermark 11: click 8 is in the gap [5, 10) and behind it; click 16,
-- in the gap [15, 20), is not
INSERT INTO wj_clicks VALUES (1, 8, 'late gap'), (1, 16, 'gap');
SELECT windowing.process('wj_gap');
SELECT side, event_time, watermark, reason, missed_windows, row_data FROM wj_gap_late;
SELECT windowing.flush('wj_gap');
SELECT * FROM wj_gap_results ORDER BY 1, 3, 4;
SELECT rows_consumed, late_routed FROM windowing.pipeline_stats WHERE name = 'wj_gap';
SELECT windowing.drop_pipeline('wj_gap', drop_tables => true);
