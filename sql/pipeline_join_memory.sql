-- An interval join keeps its rows in the memory of the process that steps
-- it, logged in state_log.  Whatever the transaction around a step, and
-- whichever process steps it next (which reads the log), each pair and
-- each unmatched row is written once.
\set SHOW_CONTEXT never
SET client_min_messages = warning;
SELECT windowing.create_queue('jm_orders', 'id int, ts timestamptz, amount int');
SELECT windowing.create_queue('jm_payments', 'id int, ts timestamptz, method text');
SELECT windowing.create_join_pipeline('jm', 'jm_orders', 'ts', '{id}', 'jm_payments', 'ts', '{id}',
    'jm_orders.id AS order_id, jm_orders.ts AS ordered, jm_payments.id AS payment_id, '
    'jm_payments.ts AS paid, jm_payments.method',
    lower => '0', upper => '10 minutes', join_type => 'full') > 0 AS created;

-- every row the pipeline meets, and the pairs and unmatched rows a full
-- join of them gives (none is late here)
CREATE TABLE jm_all_orders (id int, ts timestamptz, amount int);
CREATE TABLE jm_all_payments (id int, ts timestamptz, method text);
CREATE VIEW jm_expected AS
SELECT o.id AS order_id, o.ts AS ordered, p.id AS payment_id, p.ts AS paid, p.method
FROM jm_all_orders o FULL JOIN jm_all_payments p
  ON p.id = o.id AND p.ts BETWEEN o.ts AND o.ts + interval '10 minutes';
CREATE FUNCTION jm_add(o int[], p int[], at text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO jm_all_orders SELECT i, at::timestamptz + i * interval '1 minute', i FROM unnest(o) i;
    INSERT INTO jm_all_payments
    SELECT i, at::timestamptz + i * interval '1 minute' + interval '2 minutes', 'card' FROM unnest(p) i;
    INSERT INTO jm_orders SELECT * FROM jm_all_orders WHERE id = ANY (o);
    INSERT INTO jm_payments SELECT * FROM jm_all_payments WHERE id = ANY (p);
END $$;

-- 1. a step rolled back leaves nothing, its memory with it: the next step
-- reads the log and writes the pairs once
SELECT jm_add('{1,2,3}', '{1}', '2026-01-01 12:00');
BEGIN;
SELECT windowing.process('jm');
SELECT count(*) AS pairs_seen_inside FROM jm_results;
ROLLBACK;
SELECT count(*) AS after_rollback FROM jm_results;
SELECT windowing.process('jm');
SELECT order_id, payment_id FROM jm_results ORDER BY 1, 2;

-- 2. a savepoint rolled back, then the same step again, committed
SELECT jm_add('{4}', '{2,3}', '2026-01-01 12:00');
BEGIN;
SAVEPOINT s;
SELECT windowing.process('jm');
ROLLBACK TO SAVEPOINT s;
SELECT windowing.process('jm');
COMMIT;
SELECT order_id, payment_id FROM jm_results ORDER BY 1, 2;

-- a prepared step may commit in any session, or never: its memory goes at
-- PREPARE, and the next step reads the log the prepared one wrote (a step
-- that writes pairs notifies, which PREPARE refuses; this one keeps an
-- order)
SELECT jm_add('{41}', '{}', '2026-01-01 11:23');
BEGIN;
SELECT windowing.process('jm');
PREPARE TRANSACTION 'jm_step';
COMMIT PREPARED 'jm_step';
SELECT jm_add('{}', '{41}', '2026-01-01 11:23');
SELECT windowing.process('jm');
SELECT order_id, payment_id FROM jm_results WHERE order_id = 41;

-- 3. an exception block that catches the step's transaction's error
SELECT jm_add('{5}', '{4}', '2026-01-01 12:00');
DO $$
BEGIN
    PERFORM windowing.process('jm');
    RAISE EXCEPTION 'undo it';
EXCEPTION WHEN raise_exception THEN
    NULL;
END $$;
SELECT windowing.process('jm');
SELECT order_id, payment_id FROM jm_results ORDER BY 1, 2;

-- 4. a new session reads the rows back from the log: order 5 met payment
-- 5 in an earlier step, which the log says, so when the watermark passes
-- it, it is not written alone
SELECT jm_add('{}', '{5}', '2026-01-01 12:00');
SELECT windowing.process('jm');
\c
SET client_min_messages = warning;
SELECT key, window_start, window_end, results->0->>'side' AS side, results->0->'matched' AS matched
FROM windowing.open_windows('jm');
-- order 57 and payment 58 meet nothing: each is written alone once the
-- watermark passes it
SELECT jm_add('{51,57}', '{51,58}', '2026-01-01 12:09');
SELECT windowing.process('jm');
SELECT order_id, payment_id FROM jm_results ORDER BY 1, 2;

-- 5. rows kept in the state table by a join of an earlier release are read
-- too, and the first step logs them and empties the table
INSERT INTO jm_left_state VALUES (60, '2026-01-01 13:11', 60, pg_current_xact_id(), 100000, false);
INSERT INTO jm_all_orders VALUES (60, '2026-01-01 13:11', 60);
\c
SET client_min_messages = warning;
SELECT jm_add('{}', '{60}', '2026-01-01 12:12');
SELECT windowing.process('jm');
SELECT count(*) AS left_in_state_table FROM jm_left_state;
SELECT key, results->0->>'side' AS side, results->0->'matched' AS matched
FROM windowing.open_windows('jm');
\c
SET client_min_messages = warning;
SELECT key, results->0->>'side' AS side, results->0->'matched' AS matched
FROM windowing.open_windows('jm');

-- the end of input: every row left, each unmatched one written once, and
-- the pipeline's log is empty
SELECT windowing.flush('jm');
SELECT order_id, payment_id FROM jm_results ORDER BY 1, 2;
SELECT count(*) AS late FROM jm_late;
(SELECT order_id, ordered, payment_id, paid, method FROM jm_results EXCEPT ALL SELECT * FROM jm_expected)
UNION ALL
(SELECT * FROM jm_expected EXCEPT ALL SELECT order_id, ordered, payment_id, paid, method FROM jm_results);
SELECT count(*) AS log_rows FROM windowing.state_log l JOIN windowing.pipeline p ON p.id = l.pipeline_id
WHERE p.name = 'jm';
SELECT windowing.drop_pipeline('jm', drop_tables => true);

-- a join whose rows do not fit windowing.state_memory does not keep them
-- after its step: the next reads them back from the log, to the same
-- results
ALTER SYSTEM SET windowing.state_memory = 0;
SELECT pg_reload_conf();
\c
SET client_min_messages = warning;
TRUNCATE jm_all_orders, jm_all_payments, jm_orders, jm_payments;
SELECT windowing.create_join_pipeline('jm', 'jm_orders', 'ts', '{id}', 'jm_payments', 'ts', '{id}',
    'jm_orders.id AS order_id, jm_orders.ts AS ordered, jm_payments.id AS payment_id, '
    'jm_payments.ts AS paid, jm_payments.method',
    lower => '0', upper => '10 minutes', join_type => 'full') > 0 AS created;
SELECT jm_add('{1,2,3,4}', '{1,2}', '2026-01-02 12:00');
SELECT windowing.process('jm');
SELECT memory_windows, state_memory_bytes FROM windowing.pipeline_stats WHERE name = 'jm';
SELECT jm_add('{5,6}', '{3,4,6}', '2026-01-02 12:00');
SELECT windowing.process('jm');
-- order 8 and payment 9 meet nothing
SELECT jm_add('{7,8}', '{5,7,9}', '2026-01-02 12:00');
SELECT windowing.process('jm');
-- a step that keeps many rows logs them in several rows of at most a
-- page each; the next, which reads them back, logs the marks of the half
-- its payments meet in rows of their own
INSERT INTO jm_all_orders
SELECT i, '2026-01-02 13:00'::timestamptz + i % 7 * interval '1 second', i
FROM generate_series(1000, 2999) i;
INSERT INTO jm_orders SELECT * FROM jm_all_orders WHERE id >= 1000;
SELECT windowing.process('jm');
SELECT count(*) AS log_rows, max(octet_length(changes)) <= 8000 AS within_a_page
FROM windowing.state_log l JOIN windowing.pipeline p ON p.id = l.pipeline_id
WHERE p.name = 'jm';
INSERT INTO jm_all_payments
SELECT i, '2026-01-02 13:01', 'cash' FROM generate_series(1000, 2999, 2) i;
INSERT INTO jm_payments SELECT * FROM jm_all_payments WHERE id >= 1000;
SELECT windowing.process('jm');
SELECT count(*) AS log_rows, max(octet_length(changes)) <= 8000 AS within_a_page
FROM windowing.state_log l JOIN windowing.pipeline p ON p.id = l.pipeline_id
WHERE p.name = 'jm';
SELECT windowing.flush('jm');
SELECT count(*) AS late FROM jm_late;
(SELECT order_id, ordered, payment_id, paid, method FROM jm_results EXCEPT ALL SELECT * FROM jm_expected)
UNION ALL
(SELECT * FROM jm_expected EXCEPT ALL SELECT order_id, ordered, payment_id, paid, method FROM jm_results);
SELECT count(*) AS pairs, count(order_id) AS orders, count(payment_id) AS payments FROM jm_results;
SELECT windowing.drop_pipeline('jm', drop_tables => true);

-- windowing.state_memory caps the state a process keeps, all its
-- pipelines together: of two joins that keep 300 rows each (about 57kB),
-- the first stepped here keeps them within 100kB, the second does not,
-- and reads them back from the log at its next step, to the same results
ALTER SYSTEM SET windowing.state_memory = '100kB';
SELECT pg_reload_conf();
\c
SET client_min_messages = warning;
TRUNCATE jm_all_orders, jm_all_payments, jm_orders, jm_payments;
SELECT windowing.create_join_pipeline(name, 'jm_orders', 'ts', '{id}', 'jm_payments', 'ts', '{id}',
    'jm_orders.id AS order_id, jm_orders.ts AS ordered, jm_payments.id AS payment_id, '
    'jm_payments.ts AS paid, jm_payments.method',
    lower => '0', upper => '10 minutes', join_type => 'full') > 0 AS created
FROM (VALUES ('jm_a'), ('jm_b')) AS p (name);
INSERT INTO jm_all_orders
SELECT i, '2026-01-03 12:00'::timestamptz + i % 7 * interval '1 second', i
FROM generate_series(1, 300) i;
INSERT INTO jm_orders SELECT * FROM jm_all_orders;
SELECT windowing.process('jm_a'), windowing.process('jm_b');
SELECT name, memory_windows FROM windowing.pipeline_stats WHERE name IN ('jm_a', 'jm_b') ORDER BY 1;
-- payment 301 waits for its order, its method too long for a page: the
-- queue's row points at its TOAST table; the log holds it whole, its
-- step's changes in two rows of up to a page each
INSERT INTO jm_all_payments
SELECT i, timestamptz '2026-01-03 12:01', 'cash' FROM generate_series(1, 300, 3) i
UNION ALL
SELECT 301, '2026-01-03 12:01', string_agg(md5(i::text), '') FROM generate_series(1, 400) i;
INSERT INTO jm_payments SELECT * FROM jm_all_payments;
SELECT windowing.process('jm_a'), windowing.process('jm_b');
SELECT count(DISTINCT step) AS log_rows, count(*) AS parts,
       max(octet_length(changes)) <= 8000 AS within_a_page
FROM windowing.state_log l JOIN windowing.pipeline p ON p.id = l.pipeline_id
WHERE p.name = 'jm_b';
INSERT INTO jm_all_orders VALUES (301, '2026-01-03 12:00:59', 301);
INSERT INTO jm_orders SELECT * FROM jm_all_orders WHERE id = 301;
SELECT windowing.process('jm_a'), windowing.process('jm_b');
SELECT order_id, payment_id, length(method) FROM jm_b_results WHERE order_id = 301;
SELECT windowing.flush('jm_a'), windowing.flush('jm_b');
(SELECT order_id, ordered, payment_id, paid, method FROM jm_a_results EXCEPT ALL SELECT * FROM jm_expected)
UNION ALL
(SELECT * FROM jm_expected EXCEPT ALL SELECT order_id, ordered, payment_id, paid, method FROM jm_a_results);
(SELECT order_id, ordered, payment_id, paid, method FROM jm_b_results EXCEPT ALL SELECT * FROM jm_expected)
UNION ALL
(SELECT * FROM jm_expected EXCEPT ALL SELECT order_id, ordered, payment_id, paid, method FROM jm_b_results);
SELECT count(*) AS pairs, count(order_id) AS orders, count(payment_id) AS payments FROM jm_b_results;
SELECT windowing.drop_pipeline(name, drop_tables => true) FROM (VALUES ('jm_a'), ('jm_b')) AS p (name);
ALTER SYSTEM RESET windowing.state_memory;
SELECT pg_reload_conf();
DROP VIEW jm_expected;
DROP TABLE jm_all_orders, jm_all_payments;
DROP FUNCTION jm_add;

-- a step inside another's statement: a trigger on one join's result
-- table steps a second join while the first's pairs are being written
-- (by a statement, since the table has a trigger); each writes its own
SELECT windowing.create_queue(q, 'id int, ts timestamptz, note text')
FROM unnest('{jn_ao,jn_ap,jn_bo,jn_bp}'::text[]) q;
SELECT windowing.create_join_pipeline('jn_a', 'jn_ao', 'ts', '{id}', 'jn_ap', 'ts', '{id}',
    'jn_ao.id AS order_id, jn_ap.note', lower => '0', upper => '10 minutes') > 0 AS created;
SELECT windowing.create_join_pipeline('jn_b', 'jn_bo', 'ts', '{id}', 'jn_bp', 'ts', '{id}',
    'jn_bo.id AS order_id, jn_bo.note AS order_note, jn_bp.note', lower => '0',
    upper => '10 minutes') > 0 AS created;
CREATE FUNCTION jn_step_b() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.order_id = 1 THEN
        PERFORM windowing.process('jn_b');
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER jn_step_b BEFORE INSERT ON jn_a_results FOR EACH ROW EXECUTE FUNCTION jn_step_b();
INSERT INTO jn_ao SELECT i, '2026-01-04 12:00', 'a' FROM generate_series(1, 5) i;
INSERT INTO jn_ap SELECT i, '2026-01-04 12:01', 'a' || i FROM generate_series(1, 5) i;
INSERT INTO jn_bo SELECT i, '2026-01-04 12:00', repeat('o', 50) FROM generate_series(1, 5) i;
INSERT INTO jn_bp SELECT i, '2026-01-04 12:01', repeat('p', 50) || i FROM generate_series(1, 5) i;
SELECT windowing.process('jn_a');
SELECT order_id, note FROM jn_a_results ORDER BY 1;
SELECT order_id, length(order_note), note = repeat('p', 50) || order_id AS its_payment
FROM jn_b_results ORDER BY 1;
-- a step may not step its own pipeline: the inner step would read the
-- rows the outer one read and has not recorded yet
CREATE FUNCTION jn_step_a() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM windowing.process('jn_a');
    RETURN NEW;
END $$;
CREATE TRIGGER jn_step_a BEFORE INSERT ON jn_a_results FOR EACH ROW EXECUTE FUNCTION jn_step_a();
INSERT INTO jn_ao VALUES (6, '2026-01-04 12:02', 'a');
INSERT INTO jn_ap VALUES (6, '2026-01-04 12:03', 'a6');
SELECT windowing.process('jn_a');
SELECT count(*) AS results FROM jn_a_results;
DROP TRIGGER jn_step_a ON jn_a_results;
SELECT windowing.process('jn_a');
SELECT order_id, note FROM jn_a_results WHERE order_id = 6;
SELECT windowing.drop_pipeline(p, drop_tables => true) FROM unnest('{jn_a,jn_b}'::text[]) p;
DROP TABLE jn_ao, jn_ap, jn_bo, jn_bp;
DROP FUNCTION jn_step_a, jn_step_b;

-- a join that keeps tens of megabytes of rows: past the first few
-- megabytes they go into blocks of 2MB (huge pages where the kernel gives
-- them), which rows that leave empty and new rows take again; the pairs
-- are the SQL join's all the same
SELECT windowing.create_queue(q, 'id int, ts timestamptz, note text') FROM unnest('{jz_o,jz_p}'::text[]) q;
SELECT windowing.create_join_pipeline('jz', 'jz_o', 'ts', '{id}', 'jz_p', 'ts', '{id}',
    'jz_o.id, length(jz_o.note) AS order_note, jz_p.note', lower => '0', upper => '1 hour',
    join_type => 'left') > 0 AS created;
CREATE FUNCTION jz_orders(first int, last int, at timestamptz) RETURNS void LANGUAGE sql AS $$
    INSERT INTO jz_o SELECT i, at + i * interval '1 second', repeat('o', 1000)
    FROM generate_series(first, last) i;
$$;
CREATE FUNCTION jz_payments(first int, last int, at timestamptz) RETURNS void LANGUAGE sql AS $$
    INSERT INTO jz_p SELECT i, at + i * interval '1 second' + interval '1 minute', 'p' || i
    FROM generate_series(first, last) i WHERE i % 2 = 0;
$$;
-- 20,000 orders of a kilobyte: about 23MB kept
SELECT jz_orders(1, 20000, '2026-01-05 00:00');
SELECT windowing.process('jz');
SELECT memory_windows, state_memory_bytes BETWEEN 20000000 AND 26000000 AS about_23mb
FROM windowing.pipeline_stats WHERE name = 'jz';
-- the payments of the even ones, then a row on each side a day later: the
-- watermark passes every order, and all but the last two rows leave
SELECT jz_payments(1, 20000, '2026-01-05 00:00');
SELECT windowing.process('jz');
INSERT INTO jz_o VALUES (0, '2026-01-07 00:00', 'o');
INSERT INTO jz_p VALUES (0, '2026-01-07 00:00', 'p');
SELECT windowing.process('jz');
SELECT memory_windows, state_memory_bytes < 100000 AS small FROM windowing.pipeline_stats
WHERE name = 'jz';
-- as many again, into the blocks the others left
SELECT jz_orders(20001, 40000, '2026-01-07 00:00');
SELECT jz_payments(20001, 40000, '2026-01-07 00:00');
SELECT windowing.process('jz');
SELECT windowing.flush('jz');
SELECT count(*) AS results, count(note) AS paid FROM jz_results;
SELECT count(*) AS differences FROM (
    (SELECT id, order_note, note FROM jz_results
     EXCEPT ALL
     SELECT o.id, length(o.note), p.note FROM jz_o o
     LEFT JOIN jz_p p ON p.id = o.id AND p.ts BETWEEN o.ts AND o.ts + interval '1 hour')
    UNION ALL
    (SELECT o.id, length(o.note), p.note FROM jz_o o
     LEFT JOIN jz_p p ON p.id = o.id AND p.ts BETWEEN o.ts AND o.ts + interval '1 hour'
     EXCEPT ALL
     SELECT id, order_note, note FROM jz_results)) d;
SELECT windowing.drop_pipeline('jz', drop_tables => true);
DROP TABLE jz_o, jz_p;
DROP FUNCTION jz_orders, jz_payments;
