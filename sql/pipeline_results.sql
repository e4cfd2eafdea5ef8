-- New result rows go into a plain result table in bulk, the way COPY writes
-- them; a table with other columns, triggers or row security takes
-- INSERT's path.  Either way the table's constraints and indexes hold.
CREATE TABLE bulk_src (k int, ts bigint, v int);
SELECT windowing.create_pipeline('bulk', 'bulk_src', 'ts', '{k}',
    windowing.tumbling('10 milliseconds'), 'count(*) AS n, sum(v) AS total', start => false, retention => 'consume');
ALTER TABLE bulk_results ADD CONSTRAINT small CHECK (total < 100);
INSERT INTO bulk_src VALUES (1, 1, 5), (1, 2, 200), (2, 3, 1), (2, 12, 4);
\set VERBOSITY terse
SELECT windowing.process('bulk');
\set VERBOSITY default
ALTER TABLE bulk_results DROP CONSTRAINT small;
-- expression and partial indexes are kept up to date
CREATE INDEX bulk_doubled ON bulk_results ((total * 2)) WHERE n > 1;
SELECT windowing.process('bulk');
SELECT k, window_start, n, total, fire_count, is_final FROM bulk_results ORDER BY 2, 1;
SET enable_seqscan = off;
SELECT k, total FROM bulk_results WHERE total * 2 = 410 AND n > 1;
RESET enable_seqscan;
-- a unique index is checked as INSERT checks it
CREATE UNIQUE INDEX bulk_one_total ON bulk_results (total);
INSERT INTO bulk_src VALUES (3, 25, 4), (4, 26, 4);
SELECT windowing.process('bulk');
SELECT windowing.advance_watermark('bulk', 40::bigint);
DROP INDEX bulk_one_total;
SELECT windowing.advance_watermark('bulk', 40::bigint);
-- a column of the user's, with a default: INSERT's path fills it in
ALTER TABLE bulk_results ADD COLUMN note text;
ALTER TABLE bulk_results ALTER COLUMN note SET DEFAULT 'filled in';
INSERT INTO bulk_src VALUES (5, 45, 6);
SELECT windowing.process('bulk');
SELECT windowing.flush('bulk');
SELECT k, window_start, n, total, note FROM bulk_results ORDER BY 2, 1;
SELECT windowing.drop_pipeline('bulk', drop_tables => true);
DROP TABLE bulk_src;

-- a result table attached as a partition: INSERT's path checks its bounds
CREATE TABLE part_src (k int, ts bigint, v int);
SELECT windowing.create_pipeline('part', 'part_src', 'ts', '{k}',
    windowing.tumbling('10 milliseconds'), 'count(*) AS n', start => false, retention => 'consume');
CREATE TABLE all_results (LIKE part_results) PARTITION BY RANGE (k);
ALTER TABLE all_results ATTACH PARTITION part_results FOR VALUES FROM (0) TO (10);
INSERT INTO part_src VALUES (1, 1, 1), (20, 2, 1), (1, 15, 1);
\set VERBOSITY terse
SELECT windowing.process('part');
\set VERBOSITY default
DELETE FROM part_src WHERE k = 20;
SELECT windowing.process('part');
SELECT k, window_start, n FROM all_results;
SELECT windowing.drop_pipeline('part', drop_tables => true);
DROP TABLE all_results, part_src;

-- The windows of one end are written in the order of the result table's
-- unique index, integers by value and NULL last, so that each row goes in
-- at the index's right edge; windows kept as slices too.
CREATE TABLE order_src (k int, g bigint, ts bigint);
SELECT windowing.create_pipeline('ord', 'order_src', 'ts', '{k,g}',
    windowing.tumbling('10 milliseconds'), 'count(*) AS n', start => false, retention => 'consume');
SELECT windowing.create_pipeline('ord_hop', 'order_src', 'ts', '{k,g}',
    windowing.hopping('20 milliseconds', '10 milliseconds'), 'count(*) AS n', start => false, retention => 'consume');
INSERT INTO order_src VALUES (256, 1, 1), (1, 2, 2), (-2, 1, 3), (NULL, 1, 4),
    (1, 1, 5), (1, NULL, 6), (70000, -1, 7), (2147483647, 1, 8), (-2147483648, 1, 9), (1, 2, 25);
SELECT windowing.process('ord'), windowing.process('ord_hop');
SELECT sliced FROM windowing.pipeline WHERE name = 'ord_hop';
SELECT window_end, k, g, n FROM ord_results ORDER BY ctid;
SELECT window_end, k, g, n FROM ord_hop_results ORDER BY ctid;
SELECT windowing.drop_pipeline('ord', drop_tables => true),
    windowing.drop_pipeline('ord_hop', drop_tables => true);
DROP TABLE order_src;
-- text by its bytes: the index's order under the C collation, keys alike
-- in their first 8 bytes too
CREATE TABLE order_text (k text COLLATE "C", ts bigint);
SELECT windowing.create_pipeline('ord_text', 'order_text', 'ts', '{k}',
    windowing.tumbling('10 milliseconds'), 'count(*) AS n', start => false, retention => 'consume');
INSERT INTO order_text VALUES ('b', 1), ('ab', 2), (NULL, 3), ('a', 4), ('B', 5), ('', 6),
    ('windowing', 7), ('windowin', 8), ('windowing_b', 7), ('windowing_a', 8), ('a', 25);
SELECT windowing.process('ord_text');
SELECT quote_nullable(k) AS k, n FROM ord_text_results ORDER BY ctid;
SELECT windowing.drop_pipeline('ord_text', drop_tables => true);
DROP TABLE order_text;

-- Re-fires update result rows in place: an upsert table of a pipeline with
-- allowed lateness keeps half of each page free, so the updates are HOT
-- (pruned without vacuum); tables whose rows never change stay full.
CREATE TABLE refire_src (k int, ts bigint);
SELECT windowing.create_pipeline('refire', 'refire_src', 'ts', '{k}',
    windowing.tumbling('10 milliseconds'), allowed_lateness => '100 milliseconds', start => false, retention => 'consume');
SELECT windowing.create_pipeline('refire_append', 'refire_src', 'ts', '{k}',
    windowing.tumbling('10 milliseconds'), allowed_lateness => '100 milliseconds',
    emit => 'append', start => false, retention => 'consume');
SELECT windowing.create_pipeline('refire_never', 'refire_src', 'ts', '{k}',
    windowing.tumbling('10 milliseconds'), start => false, retention => 'consume');
SELECT relname, reloptions FROM pg_class WHERE relname LIKE 'refire%_results' ORDER BY 1;
INSERT INTO refire_src SELECT k, 1 FROM generate_series(1, 20) k;
INSERT INTO refire_src VALUES (1, 30);
SELECT windowing.process('refire');
INSERT INTO refire_src SELECT k, 2 FROM generate_series(1, 20) k;
BEGIN;
SELECT windowing.process('refire');
SELECT pg_stat_get_xact_tuples_updated('refire_results'::regclass) AS updated,
       pg_stat_get_xact_tuples_hot_updated('refire_results'::regclass) AS hot;
COMMIT;
SELECT count(*), sum(count), min(fire_count), max(fire_count) FROM refire_results WHERE k <= 20;
SELECT windowing.drop_pipeline(p, drop_tables => true)
FROM unnest(ARRAY['refire', 'refire_append', 'refire_never']) p;
DROP TABLE refire_src;
