-- windowing.stagger(): Flink's WindowStagger for tumbling windows, the
-- shift drawn once and kept in the assigner's offset.
SELECT windowing.describe(windowing.stagger(windowing.tumbling('1 hour'), 'aligned'));
SELECT windowing.describe(windowing.stagger(windowing.tumbling('1 hour', '10 minutes'), 'ALIGNED'));
-- 'random': a whole number of milliseconds below the size
SELECT bool_and(o >= '0' AND o < '10 seconds' AND extract(epoch FROM o) * 1000 = floor(extract(epoch FROM o) * 1000))
       AS in_range
FROM (SELECT (windowing.stagger(windowing.tumbling('10 seconds'), 'random'))."offset" AS o
      FROM generate_series(1, 200)) r;
-- 'natural': the clock now, modulo the size, after the offset
BEGIN;
SELECT (windowing.stagger(windowing.tumbling('1 hour', '50 minutes'), 'natural'))."offset"
       = make_interval(secs => mod(floor(extract(epoch FROM now()) * 1000) + 3000000, 3600000) / 1000)
       AS natural_shift;
COMMIT;

-- A pipeline's windows start at the drawn offset, the same at every step:
-- 10 ms windows staggered by 3 ms are [-7, 3), [3, 13), [13, 23).
CREATE TABLE st_ev (k int, ts bigint, v int);
INSERT INTO st_ev VALUES (1, 1, 1), (1, 2, 2), (1, 5, 3), (1, 12, 4), (1, 14, 5), (1, 30, 6);
SELECT NULL::void FROM windowing.create_pipeline('st', 'st_ev', 'ts', '{k}',
    windowing.tumbling('10 milliseconds', "offset" => '3 milliseconds'), 'count(*) AS n, sum(v) AS s',
    retention => 'keep', start => false);
SELECT assigner_text FROM windowing.pipelines WHERE name = 'st';
SELECT windowing.process('st', 2);
SELECT windowing.process('st');
SELECT windowing.flush('st');
SELECT window_start, window_end, n, s FROM st_results ORDER BY window_start;
-- the same through stagger() on a pipeline: its offset is kept
SELECT NULL::void FROM windowing.create_pipeline('st_random', 'st_ev', 'ts', '{k}',
    windowing.stagger(windowing.tumbling('10 milliseconds'), 'random'), 'count(*) AS n',
    retention => 'keep', start => false);
SELECT windowing.process('st_random');
SELECT windowing.flush('st_random');
SELECT bool_and((window_start % 10 + 10) % 10 = (SELECT extract(epoch FROM (p.assigner)."offset") * 1000
                                                FROM windowing.pipeline p WHERE p.name = 'st_random')
                AND window_end - window_start = 10) AS windows_at_the_drawn_offset,
       sum(n) AS rows
FROM st_random_results;

-- What cannot be staggered.
SELECT windowing.stagger(windowing.hopping('1 hour', '1 minute'), 'random');
SELECT windowing.stagger(windowing.tumbling('1 month'), 'random');
SELECT windowing.stagger(windowing.tumbling('1 day', tz => 'Europe/Paris'), 'random');
SELECT windowing.stagger(windowing.tumbling('1 hour'), 'sideways');
