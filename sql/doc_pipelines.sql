-- The SQL examples of doc/pipelines.md, as the page shows them: test/doc_examples.sh
-- checks that every example of the docs appears verbatim in a file here.
-- Its own schema keeps its tables apart from the other tests'.
CREATE SCHEMA doc_pipelines;
SET search_path = doc_pipelines, public;

SELECT windowing.create_queue('clicks', 'user_id int, ts timestamptz, amount numeric');

SELECT windowing.create_pipeline('per_minute', 'clicks', 'ts', '{user_id}',
    windowing.tumbling('1 minute'),                 -- or hopping(), cumulating()
    'count(*) AS clicks, sum(amount) AS revenue',    -- any storable aggregate
    max_out_of_orderness => '5 seconds',
    allowed_lateness => '1 minute');

INSERT INTO clicks VALUES                            -- producers just insert
  (1, '2026-01-01 12:00:05+00', 9.90), (2, '2026-01-01 12:00:40+00', 5.00),
  (1, '2026-01-01 12:01:10+00', 1.00), (1, '2026-01-01 12:00:20+00', 2.50),
  (2, '2026-01-01 11:58:00+00', 7.00);
SELECT windowing.process('per_minute');              -- what the worker does by itself

SELECT user_id, window_start, clicks, revenue, fire_count, is_final
FROM per_minute_results ORDER BY window_end, user_id;     -- fired windows
SELECT event_time, watermark, reason FROM per_minute_late; -- late rows, with the reason
SELECT name, state, watermark, rows_consumed, windows_fired, late_routed
FROM windowing.pipeline_stats WHERE name = 'per_minute';
SELECT * FROM windowing.open_windows('per_minute');  -- what unfired windows say now

SELECT windowing.flush('per_minute');                -- end of input: everything fires
SELECT windowing.drop_pipeline('per_minute', drop_tables => true);

CREATE TABLE page_views (url text, ts timestamptz);
INSERT INTO page_views VALUES ('/', '2026-01-01 12:00:00+00');
SELECT windowing.create_pipeline('views', 'page_views', 'ts', '{url}',
    windowing.tumbling('1 hour'), retention => 'keep');
SELECT * FROM windowing.queues WHERE queue = 'page_views'::regclass;
SELECT windowing.drop_pipeline('views', drop_tables => true);

CREATE TABLE hourly_views (url text, window_start timestamptz, window_end timestamptz,
    window_time timestamptz, count bigint, fire_count int, is_final boolean, fired_at timestamptz,
    reviewed boolean NOT NULL DEFAULT false);
CREATE UNIQUE INDEX ON hourly_views (window_end, url, window_start) NULLS NOT DISTINCT;
SELECT windowing.create_pipeline('hourly', 'page_views', 'ts', '{url}',
    windowing.tumbling('1 hour'), result_table => 'hourly_views', start => false);
SELECT windowing.process('hourly'), windowing.flush('hourly');
SELECT url, window_start, count, is_final, reviewed FROM hourly_views;
SELECT windowing.drop_pipeline('hourly', drop_tables => true);

CREATE TABLE views (page text, ts timestamptz);
SELECT windowing.create_pipeline('pageviews', 'views', 'ts', '{page}',
    windowing.tumbling('1 hour'), 'count(*) AS views',
    trigger => 'early every 1 minute', retention => 'consume');
INSERT INTO views VALUES ('/', '2026-01-01 12:00:10+00'), ('/', '2026-01-01 12:01:30+00'),
                         ('/', '2026-01-01 13:00:00+00');
SELECT windowing.process('pageviews');
SELECT page, window_start, views, fire_count, is_final, pane FROM pageviews_results;
SELECT windowing.drop_pipeline('pageviews', drop_tables => true);

TRUNCATE views;
SELECT windowing.create_pipeline('pageviews_live', 'views', 'ts', '{page}',
    windowing.tumbling('1 hour'), 'count(*) AS views',
    trigger => 'early every 10 seconds of processing time', retention => 'consume');
INSERT INTO views VALUES ('/', '2026-01-02 12:00:10+00'), ('/', '2026-01-02 12:01:30+00');
SET windowing.clock = '2026-01-02 12:01:35+00';
SELECT windowing.process('pageviews_live');
SET windowing.clock = '2026-01-02 12:01:40+00';
SELECT windowing.process('pageviews_live');
RESET windowing.clock;
SELECT page, window_start, views, fire_count, is_final, pane FROM pageviews_live_results;
SELECT windowing.drop_pipeline('pageviews_live', drop_tables => true);

CREATE TABLE page_hits (page text, ts timestamptz);
SELECT windowing.create_pipeline('hits_per_minute', 'page_hits', 'ts', '{page}',
    windowing.tumbling('1 minute'), emit => 'append', retention => 'consume');
SELECT windowing.create_pipeline('hits_per_hour', 'hits_per_minute_results', 'window_time', '{page}',
    windowing.tumbling('1 hour'), 'sum(count) AS hits, count(*) AS busy_minutes',
    retention => 'consume', watermark_from => 'hits_per_minute');
INSERT INTO page_hits VALUES ('/', '2026-01-01 10:00:05+00'), ('/', '2026-01-01 10:59:30+00'),
                             ('/', '2026-01-01 11:00:10+00');
SELECT windowing.process('hits_per_minute');
SELECT windowing.process('hits_per_hour');
SELECT page, window_start, hits, busy_minutes FROM hits_per_hour_results;
SELECT windowing.drop_pipeline('hits_per_hour', drop_tables => true);
SELECT windowing.drop_pipeline('hits_per_minute', drop_tables => true);
DROP TABLE page_hits;

CREATE TABLE meter_readings (meter int, ts timestamptz, kwh numeric);
SELECT windowing.create_pipeline('hourly_kwh', 'meter_readings', 'ts', '{meter}',
    windowing.tumbling('1 hour'), 'sum(kwh) AS kwh', max_out_of_orderness => '1 minute',
    fire_spread => '30 seconds', retention => 'consume');
INSERT INTO meter_readings SELECT m, '2026-01-01 10:10+00', 1.5 FROM generate_series(1, 20) m;
SELECT windowing.process('hourly_kwh');
SELECT windowing.advance_watermark('hourly_kwh', '2026-01-01 10:59:59.999999+00');
SELECT count(*) FROM hourly_kwh_results;
SELECT windowing.advance_watermark('hourly_kwh', '2026-01-01 11:00:15+00');
SELECT count(*) FROM hourly_kwh_results;
SELECT windowing.advance_watermark('hourly_kwh', '2026-01-01 11:00:30+00');
SELECT count(*), sum(kwh) FROM hourly_kwh_results;
SELECT windowing.drop_pipeline('hourly_kwh', drop_tables => true);
DROP TABLE meter_readings;

SELECT windowing.create_queue('trades', 'symbol text, ts bigint, price numeric');
SELECT windowing.create_pipeline('last_trades', 'trades', 'ts', '{symbol}',
    windowing.tumbling('1 minute'), 'count(*) AS n, avg(price) AS mean',
    evictor => 'count 3');
INSERT INTO trades VALUES ('X', 1000, 10), ('X', 2000, 11), ('X', 3000, 12), ('X', 4000, 13),
                          ('X', 60000, 20);
SELECT windowing.process('last_trades');
SELECT symbol, window_start, n, mean FROM last_trades_results;
SELECT windowing.drop_pipeline('last_trades', drop_tables => true);
DROP TABLE trades;

SELECT windowing.create_queue('quotes', 'symbol text, ts bigint, price numeric');
SELECT windowing.create_pipeline('price_moves', 'quotes', 'ts', '{symbol}',
    windowing.tumbling('1 minute'), 'count(*) AS n, min(price) AS low, max(price) AS high',
    trigger => 'early when price moves more than 0.5', emit => 'append');
INSERT INTO quotes VALUES ('X', 1000, 10.0), ('X', 2000, 10.3), ('X', 3000, 10.7), ('X', 4000, 10.9);
SELECT windowing.process('price_moves');
SELECT symbol, n, low, high, fire_count, pane FROM price_moves_results;
SELECT windowing.drop_pipeline('price_moves', drop_tables => true);
DROP TABLE quotes;

CREATE TABLE readings (sensor int, ts bigint, done_until bigint, value float8);
SELECT windowing.create_pipeline('per_sensor', 'readings', 'ts', '{sensor}',
    windowing.tumbling('10 milliseconds'), 'count(*) AS n, avg(value) AS mean',
    retention => 'consume', watermark_column => 'done_until');
INSERT INTO readings VALUES (1, 3, NULL, 0.5), (1, 14, NULL, 0.7);
-- the producer has sent everything up to 9: [0, 10) can fire
INSERT INTO readings VALUES (NULL, NULL, 9, NULL);
SELECT windowing.process('per_sensor');
SELECT sensor, window_start, window_end, n, mean FROM per_sensor_results;
SELECT windowing.drop_pipeline('per_sensor', drop_tables => true);
DROP TABLE readings;

SELECT windowing.create_queue('visits', 'page text, ts bigint');
SELECT windowing.create_pipeline('pages', 'visits', 'ts', '{}',
    windowing.session('10 milliseconds'),
    'count(DISTINCT page) AS pages, array_agg(page) AS path, '
    'string_agg(page, '' > '' ORDER BY ts) AS by_time, '
    'count(*) FILTER (WHERE page = ''/cart'') AS carts',
    max_out_of_orderness => '1 second');
-- [0, 10) and [20, 30) first, then a row whose [10, 20) merges them
INSERT INTO visits VALUES ('/', 0), ('/cart', 20), ('/item', 10), ('/', 5);
SELECT windowing.process('pages');
SELECT windowing.flush('pages');
SELECT window_start, window_end, pages, path, by_time, carts FROM pages_results;
SELECT windowing.drop_pipeline('pages', drop_tables => true);

-- Derived columns
SELECT windowing.create_queue('readings', 'sensor int, ts bigint, temp numeric');
SELECT windowing.create_pipeline('spread', 'readings', 'ts', '{sensor}',
    windowing.tumbling('10 milliseconds'),
    'count(*) AS n, sum(temp) / count(temp) AS mean, max(temp) - min(temp) AS spread, '
    'window_end - window_start AS length_ms');
INSERT INTO readings VALUES (1, 1, 20.5), (1, 4, 22.5), (1, 8, 21.0), (1, 12, 19.0);
SELECT windowing.process('spread');
SELECT sensor, window_start, n, mean, spread, length_ms FROM spread_results;
SELECT windowing.drop_pipeline('spread', drop_tables => true);

-- Rebuilding and backfilling
SELECT windowing.create_queue('orders', 'shop int, ts bigint, amount numeric',
                              retention => 'keep');
SELECT windowing.create_pipeline('sales', 'orders', 'ts', '{shop}',
    windowing.tumbling('10 milliseconds'), 'sum(amount) AS revenue');
-- history, out of order: read live, the old rows are late
INSERT INTO orders VALUES (1, 25, 5), (1, 3, 10), (1, 12, 7), (1, 7, 1);
SELECT windowing.process('sales');
SELECT count(*) AS late FROM sales_late;
-- replayed in order of time
SELECT windowing.rebuild('sales');
SELECT name, rows_total, rows_done FROM windowing.rebuild_progress;
SELECT windowing.process('sales');
SELECT window_start, revenue FROM sales_results ORDER BY window_start;
SELECT windowing.drop_pipeline('sales', drop_tables => true);

-- Purging
SELECT windowing.create_queue('sales_events', 'shop int, ts bigint, amount numeric');
SELECT windowing.create_pipeline('sales_deltas', 'sales_events', 'ts', '{shop}',
    windowing.tumbling('10 milliseconds'), 'count(*) AS n, sum(amount) AS amount',
    allowed_lateness => '5 milliseconds', emit => 'append',
    trigger => 'purging early every 2 rows');
INSERT INTO sales_events VALUES (1, 1, 1), (1, 2, 2), (1, 3, 3), (1, 12, 10), (1, 8, 100);
SELECT windowing.process('sales_deltas');
SELECT window_start, n, amount, fire_count, pane FROM sales_deltas_results
ORDER BY window_start, fire_count;
SELECT windowing.drop_pipeline('sales_deltas', drop_tables => true);

-- Joining two queues
SELECT windowing.create_queue('purchases', 'order_id int, ts timestamptz, amount numeric');
SELECT windowing.create_queue('payments', 'order_id int, ts timestamptz, method text');
SELECT windowing.create_join_pipeline('paid', 'purchases', 'ts', '{order_id}',
    'payments', 'ts', '{order_id}',
    'purchases.order_id, purchases.amount, payments.method, payments.ts - purchases.ts AS paid_after',
    lower => '0', upper => '15 minutes', join_type => 'left',
    max_out_of_orderness => '1 minute');

INSERT INTO purchases VALUES (1, '2026-01-01 12:00+00', 9.90), (2, '2026-01-01 12:01+00', 5.00);
INSERT INTO payments VALUES (1, '2026-01-01 12:04+00', 'card');
SELECT windowing.process('paid');
SELECT * FROM paid_results;                 -- order 1 and its payment
INSERT INTO purchases VALUES (3, '2026-01-01 12:30+00', 1.00);
INSERT INTO payments VALUES (3, '2026-01-01 12:31+00', 'cash');
SELECT windowing.process('paid');
SELECT * FROM paid_results ORDER BY order_id;  -- order 3 paid, order 2 unpaid for good
SELECT windowing.drop_pipeline('paid', drop_tables => true);

-- doc/pipelines.md: Window joins
SELECT windowing.create_queue('temperatures', 'sensor int, ts timestamptz, celsius numeric');
SELECT windowing.create_queue('humidities', 'sensor int, ts timestamptz, percent numeric');
SELECT windowing.create_window_join_pipeline('climate', 'temperatures', 'ts', '{sensor}',
    'humidities', 'ts', '{sensor}', 'temperatures.sensor, temperatures.celsius, humidities.percent',
    windowing.tumbling('1 minute'), join_type => 'full', allowed_lateness => '1 minute');

INSERT INTO temperatures VALUES (1, '2026-01-01 12:00:10+00', 20.5), (2, '2026-01-01 12:00:40+00', 18.0),
                                (1, '2026-01-01 12:01:20+00', 21.2);
INSERT INTO humidities VALUES (1, '2026-01-01 12:00:30+00', 40), (1, '2026-01-01 12:01:05+00', 42);
SELECT windowing.process('climate');
SELECT * FROM climate_results;     -- 12:00 fired: sensor 1's pair
INSERT INTO temperatures VALUES (1, '2026-01-01 12:00:50+00', 20.7), (1, '2026-01-01 12:02:30+00', 21.0);
INSERT INTO humidities VALUES (1, '2026-01-01 12:02:10+00', 43);
SELECT windowing.process('climate');
-- 12:00 fired again with the late reading's pair alone, then left with
-- sensor 2 alone; 12:01 fired
SELECT * FROM climate_results ORDER BY window_start, sensor, celsius;
SELECT windowing.drop_pipeline('climate', drop_tables => true);

-- Parallelism: a pipeline as parts
SELECT windowing.create_queue('taps', 'device int, ts timestamptz, ms int');
SELECT windowing.create_pipeline('taps_per_device', 'taps', 'ts', '{device}',
    windowing.session('5 minutes'), 'count(*) AS taps, sum(ms) AS ms', parallelism => 2);
INSERT INTO taps SELECT d % 10, '2026-01-01 12:00+00'::timestamptz + d * interval '1 second', d
FROM generate_series(1, 100) d;
SELECT windowing.process('taps_per_device');    -- a step of each part: 100
SELECT part, rows_consumed, open_windows FROM windowing.pipeline_stats
WHERE name = 'taps_per_device' ORDER BY part;
SELECT windowing.alter_pipeline('taps_per_device', parallelism => 3);
SELECT part, open_windows FROM windowing.pipeline_stats
WHERE name = 'taps_per_device' ORDER BY part;
SELECT windowing.flush('taps_per_device');
SELECT count(*) AS sessions, sum(taps) AS taps FROM taps_per_device_results;
SELECT windowing.drop_pipeline('taps_per_device', drop_tables => true);

RESET search_path;
DROP SCHEMA doc_pipelines CASCADE;
