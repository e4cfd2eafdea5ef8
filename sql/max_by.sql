-- max_by(value, by) and min_by(value, by), Flink's maxBy and minBy: the
-- value of the row with the greatest (least) key; on a tie the first row
-- in aggregation order; rows without a key ignored; a NULL value kept if
-- its row wins; no row with a key gives NULL.
CREATE TABLE mb (id int, grp text, user_id int, amount numeric, at timestamptz, page text);
INSERT INTO mb VALUES
  -- two rows tie for the greatest amount, two for the least
  (1, 'ties', 10, 5, '2024-01-01 00:00:01+00', 'a'),
  (2, 'ties', 11, 7, '2024-01-01 00:00:02+00', 'B'),
  (3, 'ties', 12, 7.00, '2024-01-01 00:00:03+00', 'c'),
  (4, 'ties', 13, 5.0, '2024-01-01 00:00:04+00', 'D'),
  -- rows without a key count for nothing, even the first
  (5, 'null by', 20, NULL, '2024-01-01 00:01:00+00', 'e'),
  (6, 'null by', 21, 3, NULL, 'f'),
  (7, 'null by', 22, NULL, '2024-01-01 00:02:00+00', 'g'),
  -- the greatest amount's row has no user: NULL wins
  (8, 'null value', NULL, 9, '2024-01-01 00:03:00+00', NULL),
  (9, 'null value', 31, 2, '2024-01-01 00:04:00+00', 'i'),
  -- no row has a key
  (10, 'no key', 40, NULL, NULL, 'j'),
  (11, 'no key', 41, NULL, NULL, 'k');

-- the first of equal keys wins: in id order 11 and 10, in reverse 12 and 13
SELECT grp, count(*),
       windowing.max_by(user_id, amount ORDER BY id) AS top,
       windowing.min_by(user_id, amount ORDER BY id) AS low,
       windowing.max_by(user_id, amount ORDER BY id DESC) AS top_rev,
       windowing.min_by(user_id, amount ORDER BY id DESC) AS low_rev
FROM mb GROUP BY grp ORDER BY grp;

-- equal numerics of different scales tie: the first one's value
SELECT windowing.max_by(amount::text, amount ORDER BY id) AS first_of_7,
       windowing.max_by(amount::text, amount ORDER BY id DESC) AS last_of_7,
       windowing.min_by(amount::text, amount ORDER BY id) AS first_of_5
FROM mb WHERE grp = 'ties';

-- timestamptz keys; NULL times are ignored
SELECT windowing.max_by(page, at) AS latest, windowing.min_by(page, at) AS earliest FROM mb;

-- text keys compare under the call's collation: in "C" lower case sorts
-- after upper case; ICU's root collation sorts by letter first, "D" last
SELECT windowing.max_by(id, page COLLATE "C") AS max_c,
       windowing.min_by(id, page COLLATE "C") AS min_c
FROM mb WHERE grp = 'ties';
CREATE COLLATION mb_icu (provider = icu, locale = 'und');
SELECT windowing.max_by(id, page COLLATE mb_icu) AS max_icu,
       windowing.min_by(id, page COLLATE mb_icu) AS min_icu
FROM mb WHERE grp = 'ties';
DROP COLLATION mb_icu;

-- no rows at all
SELECT windowing.max_by(id, amount) IS NULL AS none FROM mb WHERE false;

-- the whole row of a table: its row type, the row with the greatest key
SELECT grp, windowing.max_by(mb, amount ORDER BY id) AS top_row,
       pg_typeof(windowing.max_by(mb, amount)) AS type,
       (windowing.min_by(mb, amount ORDER BY id)).page AS cheapest_page
FROM mb GROUP BY grp ORDER BY grp;
-- a named composite type is as good
CREATE TYPE mb_pair AS (user_id int, page text);
SELECT windowing.max_by((user_id, page)::mb_pair, amount ORDER BY id) FROM mb;

-- an anonymous record could not be read back in another session
SELECT windowing.max_by(ROW(user_id, page), amount) FROM mb;
SELECT windowing.max_by(id, ROW(amount, id)) FROM mb;
-- a key type without an ordering
SELECT windowing.max_by(id, point(id, id)) FROM mb;
-- neither are errors in a group without rows
SELECT windowing.max_by(id, point(id, id)) FROM mb WHERE false;

-- In a parallel aggregate, workers' states are serialized and combined:
-- the same results as without.
CREATE TABLE mb_big AS
  SELECT i, i % 7 AS k, (i * 7919) % 100003 AS amount, 'p' || i AS page
  FROM generate_series(1, 50000) i;
ANALYZE mb_big;
CREATE TABLE mb_serial AS
  SELECT k, windowing.max_by(mb_big, amount) AS top, windowing.min_by(page, amount) AS low
  FROM mb_big GROUP BY k;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
EXPLAIN (COSTS OFF)
SELECT k, windowing.max_by(mb_big, amount) AS top, windowing.min_by(page, amount) AS low
FROM mb_big GROUP BY k;
CREATE TABLE mb_parallel AS
  SELECT k, windowing.max_by(mb_big, amount) AS top, windowing.min_by(page, amount) AS low
  FROM mb_big GROUP BY k;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
\i sql/include/differences.sql
SELECT pg_temp.differences('mb_serial', 'mb_parallel', 'k, top, low') AS differences;
-- and what ORDER BY ... LIMIT 1 gives (amounts are distinct)
SELECT s.k, (s.top).i = (SELECT i FROM mb_big b WHERE b.k = s.k ORDER BY amount DESC LIMIT 1) AS top_ok,
       s.low = (SELECT page FROM mb_big b WHERE b.k = s.k ORDER BY amount LIMIT 1) AS low_ok
FROM mb_serial s ORDER BY s.k;
DROP TABLE mb_big, mb_serial, mb_parallel;

------------------------------------------------------------------------
-- Pipelines keep one state per window, stored between steps through the
-- serialize and deserialize functions, and merged where sessions merge
-- with the combine function.  Keys are distinct here, so that results do
-- not depend on which part of a merged session a tie came from.
SELECT windowing.create_queue('q', 'k int, user_id int, amount numeric, ts bigint', 'keep');
-- rows out of order by up to 199 ms; NULL keys and NULL users among them
INSERT INTO q (k, user_id, amount, ts)
  SELECT i % 3,
         CASE WHEN i % 11 = 0 THEN NULL ELSE i % 37 END,
         CASE WHEN i % 13 = 0 THEN NULL ELSE round(((i * 7919) % 1000) / 10.0, 1) END,
         (i * 7919) % 200 + i * 5 + (i / 60) * 250
  FROM generate_series(1, 400) i;

\i sql/include/drain.sql
SELECT windowing.create_pipeline('mb_' || kind, 'q', 'ts', '{k}', assigner,
    'windowing.max_by(user_id, amount) AS top_user, windowing.min_by(q, amount) AS cheapest',
    max_out_of_orderness => '300 milliseconds', start => false) IS NOT NULL AS created
FROM (VALUES ('tumbling', windowing.tumbling('100 milliseconds')),
             ('session', windowing.session('40 milliseconds'))) v(kind, assigner);
-- the whole row's aggregate gives the queue's row type
SELECT attrelid::regclass AS results, attname, atttypid::regtype AS type
FROM pg_attribute
WHERE attrelid IN ('mb_tumbling_results'::regclass, 'mb_session_results'::regclass)
  AND attname IN ('top_user', 'cheapest')
ORDER BY 1, 2;
-- steps of 7 rows, every third reading its state back from the heap
CALL pg_temp.drain('mb_tumbling', 7, 3);
CALL pg_temp.drain('mb_session', 7, 3);

-- what GROUP BY gives over the windows of the SQL functions
CREATE TABLE mb_tumbling_ref AS
  SELECT k, w.window_start, w.window_end,
         windowing.max_by(user_id, amount) AS top_user, windowing.min_by(q, amount) AS cheapest
  FROM q, windowing.tumble(ts, 100) w
  GROUP BY k, w.window_start, w.window_end;
CREATE TABLE mb_session_ref AS
  SELECT k, (s).window_start, (s).window_end,
         windowing.max_by(user_id, amount) AS top_user, windowing.min_by(q, amount) AS cheapest
  FROM (SELECT q, k, user_id, amount, windowing.session(ts, 40) OVER (PARTITION BY k ORDER BY ts) AS s
        FROM q) e
  GROUP BY k, (s).window_start, (s).window_end;
SELECT kind, (SELECT count(*) FROM q) AS rows,
       pg_temp.differences('mb_' || kind || '_results', 'mb_' || kind || '_ref',
                           'k, window_start, window_end, top_user, cheapest') AS differences
FROM unnest(ARRAY['tumbling', 'session']) kind;
-- windows without a key at all, and won by a row without a user
SELECT count(*) FILTER (WHERE cheapest IS NULL) AS no_key,
       count(*) FILTER (WHERE top_user IS NULL AND cheapest IS NOT NULL) AS null_user,
       count(*) AS windows
FROM mb_tumbling_results;
-- a few windows by hand: rows of key 1 in [0, 100), and key 1's first
-- two sessions
SELECT k, user_id, amount, ts FROM q WHERE k = 1 AND ts < 100 ORDER BY amount;
SELECT window_start, window_end, top_user, (cheapest).user_id, (cheapest).amount, (cheapest).ts
FROM mb_tumbling_results WHERE k = 1 AND window_start = 0;
SELECT window_start, window_end, top_user, (cheapest).amount
FROM mb_session_results WHERE k = 1 ORDER BY window_start LIMIT 2;
SELECT windowing.drop_pipeline('mb_' || kind, true) FROM unnest(ARRAY['tumbling', 'session']) kind;
DROP TABLE mb_tumbling_ref, mb_session_ref, q;

-- Ties in a pipeline's window: the first row to arrive wins, also when
-- the state was stored and read back between the rows (every step here).
-- [100, 200) has no row with a key; in [200, 300) the first row with the
-- greatest key has no user.
SELECT windowing.create_queue('mb_ties', 'user_id int, amount int, ts bigint', 'keep');
SELECT windowing.create_pipeline('mb_ties', 'mb_ties', 'ts', '{}', windowing.tumbling('100 milliseconds'),
    'windowing.max_by(user_id, amount) AS top_user, windowing.min_by(user_id, amount) AS low_user',
    max_out_of_orderness => '1 second', start => false) IS NOT NULL AS created;
INSERT INTO mb_ties VALUES (1, 5, 30), (2, 9, 10), (3, 9, 20), (4, 5, 0), (5, NULL, 40), (6, 9, 5),
  (7, NULL, 150), (NULL, 3, 210), (8, 2, 220), (9, 3, 230);
CALL pg_temp.drain('mb_ties', 1, 1);
SELECT window_start, window_end, top_user, low_user FROM mb_ties_results ORDER BY window_start;
SELECT windowing.drop_pipeline('mb_ties', true);
DROP TABLE mb_ties;
DROP TABLE mb;
DROP TYPE mb_pair;
