-- The memory a pipeline's windows held in its process comes back once
-- they leave, the store's table of keys too: a hundred thousand keys'
-- windows fire and leave, and one key's is left.
CREATE TABLE many (k int, ts bigint, v int);
SELECT windowing.create_pipeline('many_t', 'many', 'ts', '{k}', windowing.tumbling('1 second'),
    'count(*) AS n', start => false, retention => 'consume') > 0 AS created;
INSERT INTO many SELECT i, 500, 1 FROM generate_series(1, 100000) i;
SELECT windowing.process('many_t') AS consumed;
SELECT memory_windows, state_memory_bytes > 10000000 AS over_10mb
FROM windowing.pipeline_stats WHERE name = 'many_t';
INSERT INTO many VALUES (1, 5000, 1);
SELECT windowing.process('many_t') AS consumed;
SELECT memory_windows, state_memory_bytes < 1000000 AS under_1mb
FROM windowing.pipeline_stats WHERE name = 'many_t';
SELECT count(*) AS fired, sum(n) AS rows_in_windows FROM many_t_results;
SELECT windowing.drop_pipeline('many_t', true);
DROP TABLE many;
