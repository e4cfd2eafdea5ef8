-- Join pipelines: Flink's interval join of two queues, worked by hand.
\set SHOW_CONTEXT never
SET client_min_messages = warning;
SELECT windowing.create_queue('j_orders', 'id int, ts timestamptz, amount int');
SELECT windowing.create_queue('j_payments', 'id int, ts timestamptz, method text');

-- an inner join: a payment joins its order when it is 0 to 15 minutes
-- after it, bounds included; out-of-order rows on both sides, a minute of
-- out-of-orderness
SELECT windowing.create_join_pipeline('j_paid', 'j_orders', 'ts', '{id}', 'j_payments', 'ts', '{id}',
    'j_orders.id, j_orders.amount, j_payments.method, j_payments.ts - j_orders.ts AS paid_after',
    lower => '0', upper => '15 minutes', max_out_of_orderness => '1 minute');
\d j_paid_results
INSERT INTO j_orders VALUES (1, '2026-01-01 12:00', 10), (3, '2026-01-01 12:02', 30),
                            (2, '2026-01-01 12:01', 20);
-- payment 1 is 15 minutes after its order (the bound, included), payment 2
-- 29 minutes after (too late to join), payment 4 has no order, payment 3
-- comes before its order (no match: lower is 0)
INSERT INTO j_payments VALUES (1, '2026-01-01 12:15', 'card'), (2, '2026-01-01 12:30', 'cash'),
                              (4, '2026-01-01 11:00', 'card'), (3, '2026-01-01 12:01', 'card');
SELECT windowing.process('j_paid');
SELECT * FROM j_paid_results ORDER BY id, method;
-- each input's watermark is its newest time less a minute and a
-- microsecond; the join's is the smaller of the two
SELECT side, windowing._as_timestamptz(i.watermark) AS watermark,
       windowing._as_timestamptz(i.max_seen) AS max_seen, i.rows_consumed
FROM windowing.join_input i JOIN windowing.pipeline p ON p.id = i.pipeline_id
WHERE p.name = 'j_paid' ORDER BY side;
SELECT watermark_time, max_event_time, rows_consumed, windows_fired, late_routed, backlog_rows
FROM windowing.pipeline_stats WHERE name = 'j_paid';
-- the rows kept: orders until the watermark passes their time plus 15
-- minutes, payments until it passes their own time (lower is 0), each
-- shown by open_windows() from its time to the time it leaves after
SELECT * FROM windowing.open_windows('j_paid');

-- a payment before the join's watermark (12:00:59.999999) is late, on its
-- side.  Within a step, a row is judged by its own side's watermark after
-- the rows before it and the other side's at the step's start: order 6
-- (12:03) comes after order 5 (12:40), and the payments' watermark is
-- 12:28:59.999999, so it is late too
INSERT INTO j_payments VALUES (3, '2026-01-01 12:10', 'card'), (1, '2026-01-01 11:59', 'late one');
INSERT INTO j_orders VALUES (5, '2026-01-01 12:40', 50), (6, '2026-01-01 12:03', 60);
SELECT windowing.process('j_paid');
SELECT * FROM j_paid_results ORDER BY id, method;
SELECT side, event_time, watermark, reason, row_data FROM j_paid_late ORDER BY event_time;
SELECT * FROM windowing.open_windows('j_paid');
-- the end of input: nothing is left to join
SELECT windowing.flush('j_paid');
SELECT count(*) FROM windowing.open_windows('j_paid');
-- and nothing is left in the log of the rows it kept
SELECT count(*) FROM windowing.state_log l JOIN windowing.pipeline p ON p.id = l.pipeline_id
WHERE p.name = 'j_paid';
SELECT watermark, rows_consumed, windows_fired, late_routed, late_dropped
FROM windowing.pipeline_stats WHERE name = 'j_paid';

-- the same rows in one step or in one step per row give the same pairs
SELECT windowing.create_queue('j_left', 'k int, ts bigint, v text');
SELECT windowing.create_queue('j_right', 'k int, ts bigint, w text');
CREATE FUNCTION pg_temp.feed() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM (VALUES
        ('l', 1, 100, 'a'), ('r', 1, 95, 'x'), ('r', 1, 110, 'y'), ('l', 2, 100, 'b'),
        ('r', 2, 90, 'z'), ('l', 1, 105, 'c'), ('r', 1, 100, 'u'), ('r', 2, 120, 'v'))
        AS t(side, k, ts, v) LOOP
        IF r.side = 'l' THEN
            INSERT INTO j_left VALUES (r.k, r.ts, r.v);
        ELSE
            INSERT INTO j_right VALUES (r.k, r.ts, r.v);
        END IF;
    END LOOP;
END
$$;
-- bigint times count milliseconds; exclusive bounds: a right row joins a
-- left row at t when it is in (t - 5, t + 10)
SELECT windowing.create_join_pipeline('j_once', 'j_left', 'ts', '{k}', 'j_right', 'ts', '{k}',
    'j_left.k, j_left.v, j_right.w, j_right.ts - j_left.ts AS d',
    lower => '-5 milliseconds', upper => '10 milliseconds',
    lower_exclusive => true, upper_exclusive => true, max_out_of_orderness => '100 milliseconds');
SELECT pg_temp.feed();
SELECT windowing.process('j_once');
SELECT windowing.flush('j_once');
SELECT * FROM j_once_results ORDER BY k, v, w;
-- the same rows, read one at a time
SELECT windowing.drop_pipeline('j_once', drop_tables => true);
DELETE FROM j_left;
DELETE FROM j_right;
SELECT windowing.create_join_pipeline('j_each', 'j_left', 'ts', '{k}', 'j_right', 'ts', '{k}',
    'j_left.k, j_left.v, j_right.w, j_right.ts - j_left.ts AS d',
    lower => '-5 milliseconds', upper => '10 milliseconds',
    lower_exclusive => true, upper_exclusive => true, max_out_of_orderness => '100 milliseconds');
-- a step sees only what committed before it: one row per transaction
INSERT INTO j_left VALUES (1, 100, 'a');
SELECT windowing.process('j_each');
INSERT INTO j_right VALUES (1, 95, 'x');
SELECT windowing.process('j_each');
INSERT INTO j_right VALUES (1, 110, 'y');
SELECT windowing.process('j_each');
INSERT INTO j_left VALUES (2, 100, 'b');
SELECT windowing.process('j_each');
INSERT INTO j_right VALUES (2, 90, 'z');
SELECT windowing.process('j_each');
INSERT INTO j_left VALUES (1, 105, 'c');
SELECT windowing.process('j_each');
INSERT INTO j_right VALUES (1, 100, 'u');
SELECT windowing.process('j_each');
INSERT INTO j_right VALUES (2, 120, 'v');
SELECT windowing.process('j_each');
SELECT windowing.flush('j_each');
SELECT * FROM j_each_results ORDER BY k, v, w;
SELECT windowing.drop_pipeline('j_each', drop_tables => true);
-- a new row probes the other input's kept rows only where its bounds
-- overlap their times: bounds included, each edge of that overlap meets
SELECT windowing.create_join_pipeline('j_edges', 'j_left', 'ts', '{k}', 'j_right', 'ts', '{k}',
    'j_left.k, j_left.v, j_right.w, j_right.ts - j_left.ts AS d',
    lower => '-5 milliseconds', upper => '10 milliseconds', max_out_of_orderness => '1 second');
DELETE FROM j_left;
DELETE FROM j_right;
INSERT INTO j_right VALUES (2, 95, 'x');
SELECT windowing.process('j_edges');
-- its lower bound (95) is the right's latest kept time
INSERT INTO j_left VALUES (2, 100, 'b');
SELECT windowing.process('j_edges');
INSERT INTO j_right VALUES (1, 110, 'y');
SELECT windowing.process('j_edges');
INSERT INTO j_left VALUES (1, 100, 'a');
SELECT windowing.process('j_edges');
INSERT INTO j_left VALUES (3, 200, 'c');
SELECT windowing.process('j_edges');
-- the left rows it can meet start (95 + 5) at the left's earliest kept time
INSERT INTO j_right VALUES (2, 95, 'v');
SELECT windowing.process('j_edges');
-- and end (210 - 10) at the left's latest
INSERT INTO j_right VALUES (3, 210, 'u');
SELECT windowing.process('j_edges');
-- its upper bound (95) is the right's earliest kept time
INSERT INTO j_left VALUES (2, 85, 'd');
SELECT windowing.process('j_edges');
SELECT windowing.flush('j_edges');
SELECT * FROM j_edges_results ORDER BY k, v, w;
SELECT windowing.drop_pipeline('j_edges', drop_tables => true);
-- a new pipeline reads what its queues hold: start from empty ones
DELETE FROM j_left;
DELETE FROM j_right;

-- outer joins: an unmatched row is written once the watermark shows that
-- nothing on time can meet it, with the other side's columns NULL
SELECT windowing.create_join_pipeline('j_full', 'j_left', 'ts', '{k}', 'j_right', 'ts', '{k}',
    'j_left.k AS lk, j_left.v, j_right.k AS rk, j_right.w',
    lower => '0', upper => '10 milliseconds', join_type => 'full');
INSERT INTO j_left VALUES (1, 100, 'a'), (2, 100, 'b');
INSERT INTO j_right VALUES (1, 105, 'x'), (3, 100, 'y');
SELECT windowing.process('j_full');
-- the join's watermark is 99: nothing is unmatched for good yet
SELECT * FROM j_full_results ORDER BY lk, rk;
INSERT INTO j_left VALUES (9, 120, 'c');
INSERT INTO j_right VALUES (9, 112, 'z');
SELECT windowing.process('j_full');
-- the watermark is 111: left row b (100) could meet right rows up to 110,
-- all of which would now be late, so it is written alone; right row y
-- (100) can only meet left rows from 90 to 100, all of which would be late
SELECT * FROM j_full_results ORDER BY lk, rk;
SELECT windowing.flush('j_full');
SELECT * FROM j_full_results ORDER BY lk, rk;
SELECT windowing.drop_pipeline('j_full', drop_tables => true);
DELETE FROM j_left;
DELETE FROM j_right;

SELECT windowing.create_join_pipeline('j_leftonly', 'j_left', 'ts', '{k}', 'j_right', 'ts', '{k}',
    'j_left.k, j_left.v, j_right.w', lower => '0', upper => '10 milliseconds', join_type => 'left',
    late_table => '');
SELECT windowing.create_join_pipeline('j_rightonly', 'j_left', 'ts', '{k}', 'j_right', 'ts', '{k}',
    'j_left.v, j_right.k, j_right.w', lower => '0', upper => '10 milliseconds', join_type => 'right');
INSERT INTO j_left VALUES (1, 100, 'a'), (2, 100, 'b');
INSERT INTO j_right VALUES (1, 105, 'x'), (3, 100, 'y'), (3, 300, 'later');
INSERT INTO j_left VALUES (4, 300, 'd');
SELECT windowing.process('j_leftonly'), windowing.process('j_rightonly');
-- a row behind the join's watermark (299) is late: without a late table it
-- is dropped and counted
INSERT INTO j_right VALUES (2, 101, 'too late');
SELECT windowing.process('j_leftonly'), windowing.process('j_rightonly');
SELECT * FROM j_leftonly_results ORDER BY k;
SELECT * FROM j_rightonly_results ORDER BY k;
SELECT name, late_routed, late_dropped FROM windowing.pipeline_stats
WHERE name IN ('j_leftonly', 'j_rightonly') ORDER BY name;
SELECT side, event_time, watermark, reason FROM j_rightonly_late;
-- both queues are read by both pipelines
SELECT * FROM windowing.queues WHERE queue::text LIKE 'j\_%' ORDER BY queue::text;
SELECT windowing.drop_pipeline('j_leftonly', drop_tables => true),
       windowing.drop_pipeline('j_rightonly', drop_tables => true);
DELETE FROM j_left;
DELETE FROM j_right;
DELETE FROM j_orders;
DELETE FROM j_payments;

-- an idle input stops holding the join back: after idle_timeout without
-- rows its watermark follows the clock, less max_out_of_orderness
SELECT windowing.create_join_pipeline('j_idle', 'j_orders', 'ts', '{id}', 'j_payments', 'ts', '{id}',
    'j_orders.id, j_payments.method', lower => '0', upper => '15 minutes', join_type => 'left',
    idle_timeout => '10 minutes');
SET windowing.clock = '2026-01-02 00:00+00';
INSERT INTO j_orders VALUES (7, '2026-01-02 00:00', 70);
INSERT INTO j_payments VALUES (8, '2026-01-01 23:00', 'card');
SELECT windowing.process('j_idle');
SET windowing.clock = '2026-01-02 00:05+00';
INSERT INTO j_orders VALUES (7, '2026-01-02 00:20', 71);
SELECT windowing.process('j_idle');
SELECT * FROM j_idle_results;
-- payments have been quiet for 10 minutes: their watermark is the clock,
-- which lets the first order go unpaid
SET windowing.clock = '2026-01-02 00:16+00';
SELECT windowing.process('j_idle');
SELECT * FROM j_idle_results;
SELECT watermark FROM windowing.pipeline_stats WHERE name = 'j_idle';
RESET windowing.clock;
SELECT windowing.drop_pipeline('j_idle', drop_tables => true);

-- a self-join needs aliases: each click followed by another of the same
-- user within 2 ms
SELECT windowing.create_join_pipeline('j_self', 'j_left', 'ts', '{k}', 'j_left', 'ts', '{k}',
    'a.v, b.v', lower => '0', upper => '2 milliseconds');
SELECT windowing.create_join_pipeline('j_self', 'j_left', 'ts', '{k}', 'j_left', 'ts', '{k}',
    'a.v AS first, b.v AS next', lower => '1 millisecond', upper => '2 milliseconds',
    left_alias => 'a', right_alias => 'b');
INSERT INTO j_left VALUES (1, 10, 'p'), (1, 11, 'q'), (1, 12, 'r'), (1, 20, 's'), (2, 11, 't');
SELECT windowing.process('j_self');
SELECT * FROM j_self_results ORDER BY 1, 2;
SELECT windowing.drop_pipeline('j_self', drop_tables => true);
DELETE FROM j_left;

-- transactions: a step rolled back leaves nothing behind, and the next
-- step does it again; a step in a transaction that wrote to the queue does
-- not see that transaction's rows until it commits
SELECT windowing.create_join_pipeline('j_tx', 'j_left', 'ts', '{k}', 'j_right', 'ts', '{k}',
    'j_left.v, j_right.w', lower => '0', upper => '10 milliseconds');
INSERT INTO j_left VALUES (5, 500, 'm');
INSERT INTO j_right VALUES (5, 505, 'n');
BEGIN;
SAVEPOINT s;
SELECT windowing.process('j_tx');
SELECT * FROM j_tx_results;
ROLLBACK TO SAVEPOINT s;
SELECT * FROM j_tx_results;
INSERT INTO j_right VALUES (5, 506, 'o');
SELECT windowing.process('j_tx');
SELECT * FROM j_tx_results ORDER BY 2;
COMMIT;
SELECT windowing.process('j_tx');
SELECT * FROM j_tx_results ORDER BY 2;
-- a step undone by an exception block leaves its rows to the next
INSERT INTO j_left VALUES (5, 501, 'p');
DO $$
BEGIN
    PERFORM windowing.process('j_tx');
    RAISE EXCEPTION 'undo';
EXCEPTION WHEN raise_exception THEN
    NULL;
END
$$;
SELECT * FROM j_tx_results ORDER BY 1, 2;
SELECT windowing.process('j_tx');
SELECT * FROM j_tx_results ORDER BY 1, 2;
-- a prepared step that wrote no pairs commits later; one that wrote
-- pairs has notified listeners, and PostgreSQL refuses to prepare it
INSERT INTO j_left VALUES (7, 700, 's');
BEGIN;
SELECT windowing.process('j_tx');
PREPARE TRANSACTION 'j_step';
COMMIT PREPARED 'j_step';
INSERT INTO j_right VALUES (7, 701, 't');
BEGIN;
SELECT windowing.process('j_tx');
PREPARE TRANSACTION 'j_step2';
SELECT * FROM j_tx_results ORDER BY 1, 2;
SELECT windowing.process('j_tx');
SELECT * FROM j_tx_results ORDER BY 1, 2;
SELECT rows_consumed, windows_fired FROM windowing.pipeline_stats WHERE name = 'j_tx';
-- pause, resume and ownership work as for any pipeline
SELECT windowing.pause_pipeline('j_tx');
SELECT state FROM windowing.pipelines WHERE name = 'j_tx';
SELECT windowing.resume_pipeline('j_tx');
SELECT join_type, join_lower, join_upper, join_lower_exclusive, join_upper_exclusive, aggregates
FROM windowing.pipelines WHERE name = 'j_tx';

-- a join's watermark settings change from its next step; the rest of its
-- definition does not
SELECT windowing.alter_pipeline('j_tx', max_out_of_orderness => '1 second', idle_timeout => '1 minute');
SELECT max_out_of_orderness, allowed_lateness FROM windowing.pipelines WHERE name = 'j_tx';
SELECT windowing.alter_pipeline('j_tx', aggregates => 'j_left.v');
-- what aggregate pipelines have and joins do not, refused clearly
SELECT windowing.rebuild('j_tx');
-- (open_windows() shows the rows an interval join keeps)
SELECT * FROM windowing.open_windows('j_tx');

-- definitions refused
SELECT windowing.create_join_pipeline('j_bad', 'j_left', 'ts', '{k}', 'j_right', 'ts', '{k}',
    'j_left.v', lower => '0', upper => '1 millisecond', join_type => 'cross');
SELECT windowing.create_join_pipeline('j_bad', 'j_left', 'ts', '{k}', 'j_right', 'ts', '{k}',
    'j_left.v', lower => '2 milliseconds', upper => '1 millisecond');
SELECT windowing.create_join_pipeline('j_bad', 'j_left', 'ts', '{k}', 'j_right', 'ts', '{k}',
    'j_left.v', lower => '1 millisecond', upper => '1 millisecond', upper_exclusive => true);
SELECT windowing.create_join_pipeline('j_bad', 'j_left', 'ts', '{k}', 'j_right', 'ts', '{k}',
    'j_left.v', lower => '0', upper => '1 month');
SELECT windowing.create_join_pipeline('j_bad', 'j_left', 'ts', '{k}', 'j_payments', 'ts', '{id}',
    'j_left.v', lower => '0', upper => '1 second');
SELECT windowing.create_join_pipeline('j_bad', 'j_left', 'ts', '{k}', 'j_right', 'ts', '{w}',
    'j_left.v', lower => '0', upper => '1 millisecond');
SELECT windowing.create_join_pipeline('j_bad', 'j_left', 'ts', '{k,v}', 'j_right', 'ts', '{k}',
    'j_left.v', lower => '0', upper => '1 millisecond');
SELECT windowing.create_join_pipeline('j_bad', 'j_left', 'ts', '{}', 'j_right', 'ts', '{}',
    'j_left.v', lower => '0', upper => '1 millisecond');
SELECT windowing.create_join_pipeline('j_bad', 'j_left', NULL, '{k}', 'j_right', 'ts', '{k}',
    'j_left.v', lower => '0', upper => '1 millisecond');
SELECT windowing.create_join_pipeline('j_bad', 'j_left', 'ts', '{k}', 'j_right', 'ts', '{k}',
    'j_left.nope', lower => '0', upper => '1 millisecond');
SELECT windowing.create_join_pipeline('j_bad', 'j_left', 'ts', '{k}', 'j_right', 'ts', '{k}',
    'count(*)', lower => '0', upper => '1 millisecond');
SELECT windowing.create_join_pipeline('j_tx', 'j_left', 'ts', '{k}', 'j_right', 'ts', '{k}',
    'j_left.v', lower => '0', upper => '1 millisecond');
CREATE TABLE j_plain (k int, ts bigint);
SELECT windowing.create_join_pipeline('j_bad', 'j_left', 'ts', '{k}', 'j_plain', 'ts', '{k}',
    'j_left.v', lower => '0', upper => '1 millisecond');
SELECT to_regclass('j_bad_results') IS NULL AS nothing_made;

-- dropping a join drops its state tables, and its results only if asked
SELECT windowing.drop_pipeline('j_tx');
SELECT to_regclass('j_tx_left_state') IS NULL AS left_gone, to_regclass('j_tx_right_state') IS NULL AS right_gone,
       to_regclass('j_tx_results') IS NOT NULL AS results_kept;
SELECT windowing.drop_pipeline('j_paid', drop_tables => true);
DROP TABLE j_tx_results, j_tx_late, j_plain, j_orders, j_payments, j_left, j_right;
