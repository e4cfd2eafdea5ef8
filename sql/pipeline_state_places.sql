-- A step takes out of the state store the windows of the keys its rows
-- name and of the timers its watermark reaches, and puts back what they
-- became: into the places they had where their states still fit, into new
-- ones where they grew, and not at all where they fired and left or merged
-- into another.  The key's rows may come before or after its timers in
-- the step.  Whatever the mix, the results are those of one step over
-- every row.
CREATE TABLE places (k int, ts bigint, v int);
INSERT INTO places
  SELECT i % 5, i * 3 + (i * 7919) % 100, i FROM generate_series(1, 1500) i;
SELECT windowing.create_pipeline(name || kind, 'places', 'ts', '{k}', assigner,
    'count(*) AS n, array_agg(v ORDER BY ts, v) AS vs',
    max_out_of_orderness => '20 milliseconds', allowed_lateness => lateness,
    start => false, retention => 'consume') > 0 AS created
FROM (VALUES ('t', windowing.tumbling('100 milliseconds'), interval '20 milliseconds'),
             ('s', windowing.session('15 milliseconds'), interval '0'),
             ('h', windowing.hopping('60 milliseconds', '20 milliseconds'), interval '30 milliseconds'))
       a(kind, assigner, lateness),
     unnest(ARRAY['one_', 'small_']) name;
\i sql/include/drain.sql
\i sql/include/differences.sql

-- each kind's one_ pipeline in one step, its small_ one in steps of six
-- rows; "steps" of these, or all of the rows, then flushed
CREATE PROCEDURE pg_temp.drain_both(steps int, flush boolean)
LANGUAGE plpgsql AS $$
DECLARE
    kind text;
BEGIN
    FOREACH kind IN ARRAY ARRAY['t', 's', 'h'] LOOP
        CALL pg_temp.drain('one_' || kind, coalesce(steps * 6, 100000), 0, 1, flush);
        CALL pg_temp.drain('small_' || kind, 6, 0, steps, flush);
    END LOOP;
END
$$;

-- half the rows, then what is open is the same whatever the steps
CALL pg_temp.drain_both(125, false);
SELECT kind,
       (SELECT count(*) FROM windowing.open_windows('one_' || kind)) AS open,
       (SELECT count(*) FROM ((SELECT key, window_start, window_end, results::text
                               FROM windowing.open_windows('one_' || kind)
                               EXCEPT ALL
                               SELECT key, window_start, window_end, results::text
                               FROM windowing.open_windows('small_' || kind))
                              UNION ALL
                              (SELECT key, window_start, window_end, results::text
                               FROM windowing.open_windows('small_' || kind)
                               EXCEPT ALL
                               SELECT key, window_start, window_end, results::text
                               FROM windowing.open_windows('one_' || kind))) d) AS open_differences
FROM unnest(ARRAY['t', 's', 'h']) kind ORDER BY kind;

CALL pg_temp.drain_both(NULL, true);
SELECT kind,
       (SELECT count(*) FROM windowing.open_windows('small_' || kind)) AS open_after,
       pg_temp.differences('one_' || kind || '_results', 'small_' || kind || '_results',
           'k, window_start, window_end, n, vs, fire_count') AS results,
       pg_temp.differences('one_' || kind || '_late', 'small_' || kind || '_late',
           'event_time, watermark, reason, row_data::text') AS late_rows
FROM unnest(ARRAY['t', 's', 'h']) kind ORDER BY kind;
-- what the tumbling windows fired: states that grew, windows fired again
-- for late rows, rows too late for any
SELECT count(*) AS windows, max(cardinality(vs)) AS most_values, sum(n) AS rows_in_windows,
       count(*) FILTER (WHERE fire_count > 1) AS refired,
       (SELECT count(*) FROM small_t_late) AS late
FROM small_t_results;

SELECT count(*) FROM (SELECT windowing.drop_pipeline(name || kind, true)
                      FROM unnest(ARRAY['t', 's', 'h']) kind,
                           unnest(ARRAY['one_', 'small_']) name) d;
DROP TABLE places;
