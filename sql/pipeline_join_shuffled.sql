-- Join pipelines over batches of both inputs in a seeded shuffled order
-- (some far behind): as each batch comes, each pipeline's state may be
-- forgotten (as after a restart), its steps may read a few rows at a
-- time or be rolled back in a subtransaction, and its inputs may be idle
-- long enough for the watermark to follow the clock.  An interval join's
-- results are the SQL full join of the rows that were not late; a
-- session window join's, with allowed lateness for every row, the full
-- join of both inputs' rows by session; a hopping window join's, without
-- allowed lateness, the SQL join by window of every row in every window,
-- but for the windows its late table says each row missed.
SELECT windowing.create_queue('js_orders', 'k int, ts timestamptz, v int', retention => 'keep');
SELECT windowing.create_queue('js_payments', 'k int, ts timestamptz, w int', retention => 'keep');
SELECT windowing.create_join_pipeline('js_interval', 'js_orders', 'ts', '{k}', 'js_payments', 'ts', '{k}',
    'js_orders.k AS ok, js_orders.v, js_payments.k AS pk, js_payments.w',
    lower => '-2 minutes', upper => '3 minutes', join_type => 'full',
    max_out_of_orderness => '10 minutes', idle_timeout => '1 minute', start => false) > 0;
SELECT windowing.create_window_join_pipeline('js_session', 'js_orders', 'ts', '{k}',
    'js_payments', 'ts', '{k}', 'js_orders.k AS ok, js_orders.v, js_payments.k AS pk, js_payments.w',
    windowing.session('2 minutes'), join_type => 'full', allowed_lateness => '100 days',
    max_out_of_orderness => '10 minutes', idle_timeout => '1 minute', start => false) > 0;
SELECT windowing.create_window_join_pipeline('js_hop', 'js_orders', 'ts', '{k}',
    'js_payments', 'ts', '{k}', 'js_orders.k AS ok, js_orders.v, js_payments.k AS pk, js_payments.w',
    windowing.hopping('4 minutes', '2 minutes'),
    max_out_of_orderness => '10 minutes', idle_timeout => '1 minute', start => false) > 0;
\i sql/include/shuffled_step.sql
SELECT setseed(0.3);
CREATE TEMP TABLE js_batches AS
SELECT side, b, row_number() OVER (ORDER BY b + CASE WHEN random() < 0.1 THEN random() * 40
                                                    ELSE random() * 3 END) AS ord
FROM generate_series(0, 99) b, (VALUES ('l'), ('r')) s(side);
-- orders of keys 0-36, payments of keys 0-40: some of each meet nothing
CREATE PROCEDURE pg_temp.js_feed() LANGUAGE plpgsql AS $$
DECLARE
    r record;
    p text;
    newest int := 0;
BEGIN
    FOR r IN SELECT side, b FROM js_batches ORDER BY ord LOOP
        IF r.side = 'l' THEN
            INSERT INTO js_orders SELECT g % 37, '2026-01-01 00:00+00'::timestamptz + g * interval '5 seconds', g
            FROM generate_series(r.b * 40 + 1, r.b * 40 + 40) g;
        ELSE
            INSERT INTO js_payments SELECT (g * 7) % 41, '2026-01-01 00:00+00'::timestamptz
                + g * interval '5 seconds' + (g % 5) * interval '17 seconds', g
            FROM generate_series(r.b * 40 + 1, r.b * 40 + 40) g;
        END IF;
        newest := greatest(newest, r.b);
        COMMIT;
        FOREACH p IN ARRAY ARRAY['js_interval', 'js_session', 'js_hop'] LOOP
            CALL pg_temp.shuffled_step(p, '2026-01-01 00:00+00'::timestamptz
                                          + (newest * 200 + 200) * interval '1 second',
                                       r.b < newest, 0.2, 0.3);
        END LOOP;
        COMMIT;
    END LOOP;
END
$$;
CALL pg_temp.js_feed();
RESET windowing.clock;
SELECT name, windowing.process(name) AS consumed FROM windowing.pipeline
WHERE name LIKE 'js\_%' ORDER BY name;
SELECT count(*) AS flushed FROM (SELECT windowing.flush(name) FROM windowing.pipeline
                                 WHERE name LIKE 'js\_%') f;
SELECT side, count(*) AS late FROM js_interval_late GROUP BY side ORDER BY side;
SELECT count(*) AS late FROM js_session_late;

CREATE TEMP TABLE orders_on_time AS SELECT * FROM js_orders
WHERE v NOT IN (SELECT (row_data ->> 'v')::int FROM js_interval_late WHERE side = 'left');
CREATE TEMP TABLE payments_on_time AS SELECT * FROM js_payments
WHERE w NOT IN (SELECT (row_data ->> 'w')::int FROM js_interval_late WHERE side = 'right');
CREATE TEMP TABLE interval_want AS
SELECT o.k AS ok, o.v, p.k AS pk, p.w
FROM orders_on_time o FULL JOIN payments_on_time p
  ON o.k = p.k AND p.ts BETWEEN o.ts - interval '2 minutes' AND o.ts + interval '3 minutes';
SELECT count(*) AS rows, count(*) FILTER (WHERE w IS NULL) AS orders_alone,
       count(*) FILTER (WHERE v IS NULL) AS payments_alone
FROM interval_want;
SELECT count(*) AS interval_wrong FROM (
    (SELECT ok, v, pk, w FROM js_interval_results EXCEPT ALL TABLE interval_want)
    UNION ALL (TABLE interval_want EXCEPT ALL SELECT ok, v, pk, w FROM js_interval_results)) d;

CREATE TEMP TABLE by_session AS
SELECT k, v, w, (windowing.session(ts, '2 minutes') OVER (PARTITION BY k)).window_start AS s
FROM (SELECT k, ts, v, NULL::int AS w FROM js_orders
      UNION ALL SELECT k, ts, NULL, w FROM js_payments) x;
CREATE TEMP TABLE session_want AS
SELECT o.k AS ok, o.v, p.k AS pk, p.w
FROM (SELECT * FROM by_session WHERE v IS NOT NULL) o
FULL JOIN (SELECT * FROM by_session WHERE w IS NOT NULL) p ON o.k = p.k AND o.s = p.s;
SELECT count(*) AS rows, count(*) FILTER (WHERE w IS NULL) AS orders_alone,
       count(*) FILTER (WHERE v IS NULL) AS payments_alone
FROM session_want;
SELECT count(*) AS session_wrong FROM (
    (SELECT ok, v, pk, w FROM js_session_results EXCEPT ALL TABLE session_want)
    UNION ALL (TABLE session_want EXCEPT ALL SELECT ok, v, pk, w FROM js_session_results)) d;

-- each row in each of its windows, but those it missed
CREATE TEMP TABLE hop_missed AS
SELECT l.side, coalesce(l.row_data ->> 'v', l.row_data ->> 'w')::int AS id, l.reason, m
FROM js_hop_late l, unnest(l.missed_windows) m;
SELECT reason, count(DISTINCT (side, id)) AS rows, count(*) AS windows
FROM hop_missed GROUP BY reason ORDER BY reason;
CREATE TEMP TABLE hop_want AS
SELECT o.window_start, o.window_end, o.k AS ok, o.v, p.k AS pk, p.w
FROM (SELECT * FROM js_orders, windowing.hop(ts, '4 minutes', '2 minutes') h
      WHERE (v, h) NOT IN (SELECT id, m FROM hop_missed WHERE side = 'left')) o
JOIN (SELECT * FROM js_payments, windowing.hop(ts, '4 minutes', '2 minutes') h
      WHERE (w, h) NOT IN (SELECT id, m FROM hop_missed WHERE side = 'right')) p
  ON o.k = p.k AND o.window_start = p.window_start;
SELECT count(*) AS rows FROM hop_want;
SELECT count(*) AS hop_wrong FROM (
    (SELECT window_start, window_end, ok, v, pk, w FROM js_hop_results EXCEPT ALL TABLE hop_want)
    UNION ALL (TABLE hop_want EXCEPT ALL SELECT window_start, window_end, ok, v, pk, w FROM js_hop_results)) d;

SELECT windowing.drop_pipeline(name, true) FROM windowing.pipeline WHERE name LIKE 'js\_%' ORDER BY name;
DROP TABLE js_orders, js_payments;
