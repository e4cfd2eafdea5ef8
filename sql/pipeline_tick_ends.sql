-- Stepping with max_rows until a step reads nothing reads every row
-- committed before: a step that finds the tick an earlier step left open
-- read to its end goes on to the rows committed since, as far as
-- max_rows lets it, rather than read nothing.
CREATE TABLE ends (k int, ts bigint, v int);
SELECT windowing.create_pipeline('ends_p', 'ends', 'ts', '{k}', windowing.tumbling('1 second'),
    'count(*) AS n', start => false, retention => 'consume') > 0;
INSERT INTO ends VALUES (1, 1, 1), (2, 2, 1), (3, 3, 1);
-- each step reads max_rows: none of them knows that its tick ended
SELECT windowing.process('ends_p', 1) FROM generate_series(1, 3);
INSERT INTO ends VALUES (1, 4, 1), (2, 5, 1);
SELECT windowing.process('ends_p', 1) FROM generate_series(1, 3);
-- a step that reads fewer than max_rows ends its tick itself
INSERT INTO ends VALUES (3, 6, 1);
SELECT windowing.process('ends_p', 5);
INSERT INTO ends VALUES (1, 7, 1);
SELECT windowing.process('ends_p', 5);
SELECT windowing.process('ends_p', 5);
SELECT rows_consumed, steps FROM windowing.pipeline_stats WHERE name = 'ends_p';
SELECT windowing.drop_pipeline('ends_p', true);
DROP TABLE ends;
