-- The SQL examples of README.md, as the page shows them: test/doc_examples.sh
-- checks that every example of the docs appears verbatim in a file here.
-- Its own schema keeps its tables apart from the other tests'.
CREATE SCHEMA doc_tour;
SET search_path = doc_tour, public;

CREATE EXTENSION IF NOT EXISTS windowing;

CREATE TABLE tour_orders (ts timestamptz, amount numeric);
INSERT INTO tour_orders VALUES
  ('2026-10-01 00:30+08', 10), ('2026-10-01 07:59+08', 20),
  ('2026-10-01 08:00+08', 30), ('2026-10-01 23:30+08', 50),
  ('2026-10-02 07:30+08', 60);

SELECT w.window_start, w.window_end, count(*), sum(amount)
FROM tour_orders, windowing.tumble(ts, '1 day') w
GROUP BY 1, 2 ORDER BY 1;

SELECT w.window_start, count(*), sum(amount)
FROM tour_orders, windowing.tumble(ts, '1 day', tz => 'Asia/Shanghai') w
GROUP BY 1 ORDER BY 1;

-- six-hour windows every two hours; the _start forms are the fast ones
SELECT windowing.hop_start(ts, '6 hours', '2 hours') AS window_start, count(*)
FROM tour_orders GROUP BY 1 ORDER BY 1;

SELECT windowing.sessions(ts, '8 hours') FROM tour_orders;

SELECT windowing.create_queue('tour_clicks', 'user_id int, ts timestamptz, amount numeric');
SELECT windowing.create_pipeline('tour', 'tour_clicks', 'ts', '{user_id}',
    windowing.tumbling('1 minute'), 'count(*) AS clicks, sum(amount) AS revenue',
    max_out_of_orderness => '5 seconds', allowed_lateness => '30 seconds');

INSERT INTO tour_clicks VALUES
  (1, '2026-01-01 12:00:05+00', 9.90), (2, '2026-01-01 12:00:40+00', 5.00),
  (1, '2026-01-01 12:01:10+00', 1.00), (1, '2026-01-01 12:00:55+00', 2.50),
  (2, '2026-01-01 11:58:30+00', 7.00);
SELECT windowing.process('tour');

-- minute 12:00 fired when the watermark (12:01:05 less 1 µs) passed its
-- end, and again for 12:00:55, late but within the allowed lateness; the
-- row of 11:58:30 came after its window was gone
SELECT user_id, window_start, clicks, revenue, is_final
FROM tour_results ORDER BY window_start, user_id;
SELECT event_time, reason FROM tour_late;
SELECT name, watermark, rows_consumed, windows_fired, late_routed
FROM windowing.pipeline_stats WHERE name = 'tour';

-- end of input: the last windows fire; then clean up
SELECT windowing.flush('tour');
SELECT user_id, window_start, clicks FROM tour_results ORDER BY window_start, user_id;
SELECT windowing.drop_pipeline('tour', drop_tables => true);
DROP TABLE tour_clicks, tour_orders;

RESET search_path;
DROP SCHEMA doc_tour CASCADE;
