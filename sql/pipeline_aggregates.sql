-- Aggregates beyond plain calls: FILTER, DISTINCT, array_agg and
-- string_agg.  Each pipeline runs in small steps, its state read back
-- from the heap every few steps, and must give what GROUP BY gives over
-- the same rows, in every kind of window.
CREATE TABLE ev (k int, ts bigint, v int, t text, n numeric, c boolean);
-- rows out of order by up to 199 ms, in bursts 250 ms apart; NULLs in every
-- column an aggregate reads
INSERT INTO ev
  SELECT i % 3, (i * 7919) % 200 + i * 5 + (i / 60) * 250,
         CASE WHEN i % 11 = 0 THEN NULL ELSE i % 7 END,
         CASE WHEN i % 13 = 0 THEN NULL ELSE 'x' || (i % 5) END,
         CASE WHEN i % 17 = 0 THEN NULL ELSE (i % 9) / 4.0 END,
         CASE i % 4 WHEN 0 THEN NULL ELSE i % 4 = 1 END
  FROM generate_series(1, 600) i;

\i sql/include/differences.sql

-- The windows of each kind, as the SQL functions give them.
CREATE TABLE kinds (kind text, assigner windowing.assigner, rows_windows text);
INSERT INTO kinds VALUES
  ('tumbling', windowing.tumbling('100 milliseconds'),
   'ev, windowing.tumble(ts, 100) w'),
  ('session', windowing.session('40 milliseconds'),
   '(SELECT e.*, (e.s).window_start, (e.s).window_end FROM (SELECT ev.*, windowing.session(ts, 40) '
   'OVER (PARTITION BY k ORDER BY ts) AS s FROM ev) e) w'),
  ('hopping', windowing.hopping('100 milliseconds', '25 milliseconds'),
   'ev, windowing.hop(ts, 100, 25) w'),
  ('cumulating', windowing.cumulating('25 milliseconds', '100 milliseconds'),
   'ev, windowing.cumulate(ts, 25, 100) w');

-- The pipelines prefix_kind in steps of step_rows rows, each committed;
-- every third step finds no state in shared memory and reads it back from
-- window_state and state_log.
\i sql/include/drain.sql
CREATE PROCEDURE pg_temp.drain_kinds(prefix text, step_rows int)
LANGUAGE plpgsql AS $$
DECLARE
    p_name text;
BEGIN
    FOR p_name IN SELECT prefix || '_' || kind FROM kinds ORDER BY kind LOOP
        CALL pg_temp.drain(p_name, step_rows, 3);
    END LOOP;
END
$$;

-- One pipeline per kind of window over "aggs", named prefix_kind.
CREATE FUNCTION pg_temp.create(prefix text, aggs text) RETURNS void
LANGUAGE sql AS $$
    SELECT windowing.create_pipeline(prefix || '_' || kind, 'ev', 'ts', '{k}', assigner, aggs,
        max_out_of_orderness => '300 milliseconds', start => false, retention => 'keep')
    FROM kinds
$$;

-- The windows of each kind that differ from GROUP BY over ref_aggs (by
-- default the pipelines' own aggregates), whose outputs are the columns
-- cols.
CREATE FUNCTION pg_temp.compare(prefix text, cols text, ref_aggs text DEFAULT NULL)
RETURNS TABLE (kind text, windows bigint, late bigint, differences bigint)
LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM kinds ORDER BY kind LOOP
        EXECUTE format('CREATE TEMP TABLE ref AS SELECT k, window_start, window_end, %s '
                       'FROM %s GROUP BY k, window_start, window_end',
                       coalesce(ref_aggs, (SELECT p.aggregates FROM windowing.pipeline p
                                           WHERE p.name = prefix || '_' || r.kind)),
                       r.rows_windows);
        kind := r.kind;
        EXECUTE format('SELECT count(*) FROM %I', prefix || '_' || r.kind || '_results') INTO windows;
        EXECUTE format('SELECT count(*) FROM %I', prefix || '_' || r.kind || '_late') INTO late;
        differences := pg_temp.differences(prefix || '_' || r.kind || '_results', 'ref',
                                           'k, window_start, window_end, ' || cols);
        DROP TABLE ref;
        RETURN NEXT;
    END LOOP;
END
$$;

------------------------------------------------------------------------
-- FILTER (WHERE ...): a row whose condition is false or NULL leaves the
-- aggregate as it was; a window whose rows all fail it still fires, with
-- count 0 and NULL for the others.
SELECT pg_temp.create('f',
    'count(*) AS n, count(*) FILTER (WHERE v > 2) AS n_big, '
    'sum(v) FILTER (WHERE c) AS sum_c, max(t) FILTER (WHERE v IS NULL) AS t_nullv, '
    'avg(n) FILTER (WHERE n > 1) AS avg_n, count(v) FILTER (WHERE c IS NULL) AS n_cnull');
CALL pg_temp.drain_kinds('f', 7);
SELECT * FROM pg_temp.compare('f', 'n, n_big, sum_c, t_nullv, avg_n, n_cnull');
-- windows where no row passed a FILTER
SELECT count(*) FILTER (WHERE t_nullv IS NULL) AS no_null_v,
       count(*) FILTER (WHERE sum_c IS NULL) AS no_c,
       count(*) FILTER (WHERE n_big = 0) AS no_big
FROM f_tumbling_results;


------------------------------------------------------------------------
-- Derived columns: expressions over the aggregates, kept-rows ones
-- included, and over the window's bounds, as GROUP BY computes them.
SELECT pg_temp.create('x',
    'count(*) AS n, sum(v)::numeric / nullif(count(v), 0) AS mean, max(v) - min(v) AS spread, '
    'window_end - window_start AS len, cardinality(array_agg(DISTINCT v)) * 100 + count(*) AS mixed, '
    'coalesce(max(t), ''none'') || ''@'' || window_start AS label');
CALL pg_temp.drain_kinds('x', 7);
SELECT * FROM pg_temp.compare('x', 'n, mean, spread, len, mixed, label');


------------------------------------------------------------------------
-- DISTINCT: each window keeps the set of its distinct inputs, merged
-- where sessions merge and slices combine, and runs the aggregate over the
-- set when it fires.  v repeats in every window, and in the sessions that
-- merge.
SELECT pg_temp.create('d',
    'count(DISTINCT v) AS dv, sum(DISTINCT n) AS sdn, avg(DISTINCT v) AS adv, '
    'count(DISTINCT t) FILTER (WHERE c) AS dtc, min(DISTINCT t) AS mint, '
    'array_agg(DISTINCT v) AS vs, string_agg(DISTINCT t, '','') AS ts');
CALL pg_temp.drain_kinds('d', 7);
SELECT * FROM pg_temp.compare('d', 'dv, sdn, adv, dtc, mint, vs, ts');

-- A value in both of two sessions that a later row merges counts once:
-- [0, 10) and [20, 30) each hold 'a', then 'b' at 10 merges them, each row
-- in a step of its own that reads the state back from the heap.
CREATE TABLE merging (v text, ts bigint);
SELECT windowing.create_pipeline('merging', 'merging', 'ts', '{}', windowing.session('10 milliseconds'),
    'count(DISTINCT v) AS dv, array_agg(v) AS vs, array_agg(v ORDER BY ts) AS by_ts',
    max_out_of_orderness => '1 second', start => false, retention => 'keep');
INSERT INTO merging VALUES ('a', 0), ('a', 20), ('b', 10);
SELECT windowing._forget_state(id) FROM windowing.pipeline WHERE name = 'merging' \gset
SELECT windowing.process('merging', 1);
SELECT windowing._forget_state(id) FROM windowing.pipeline WHERE name = 'merging' \gset
SELECT windowing.process('merging', 1);
SELECT windowing._forget_state(id) FROM windowing.pipeline WHERE name = 'merging' \gset
SELECT windowing.process('merging', 1);
SELECT windowing.flush('merging');
SELECT window_start, window_end, dv, vs, by_ts FROM merging_results;
SELECT windowing.drop_pipeline('merging', true);
DROP TABLE merging;

------------------------------------------------------------------------
-- array_agg, string_agg and jsonb_agg keep their rows: without ORDER BY
-- in arrival order (windowing_seq), in every kind of window, also where
-- sessions merged and slices combined; with ORDER BY in its order, ties
-- in arrival order.  A NULL delimiter adds nothing, as in a query.
-- The pipelines "ah_" read the queue in one step, through a helper process.
SELECT pg_temp.create(prefix,
    'array_agg(v) AS vs, string_agg(t, ''|'') AS st, jsonb_agg(n) AS jn, '
    'array_agg(n ORDER BY v DESC NULLS LAST) AS ns, '
    'string_agg(t, v::text ORDER BY t) FILTER (WHERE c IS NOT NULL) AS sv')
FROM unnest(ARRAY['a', 'ah']) prefix;
CALL pg_temp.drain_kinds('a', 7);
SET windowing.read_helper_rows = 1;
SELECT windowing.process('ah_' || kind), windowing.flush('ah_' || kind) FROM kinds ORDER BY kind;
RESET windowing.read_helper_rows;
SELECT prefix, c.* FROM unnest(ARRAY['a', 'ah']) prefix, pg_temp.compare(prefix,
    'vs, st, jn, ns, sv',
    'array_agg(v ORDER BY windowing_seq) AS vs, '
    'string_agg(t, ''|'' ORDER BY windowing_seq) AS st, '
    'jsonb_agg(n ORDER BY windowing_seq) AS jn, '
    'array_agg(n ORDER BY v DESC NULLS LAST, windowing_seq) AS ns, '
    'string_agg(t, v::text ORDER BY t, windowing_seq) FILTER (WHERE c IS NOT NULL) AS sv') c;

-- With on_error 'route', a row whose input fails goes to the late table and
-- the step runs again, reading the queue through SQL, arrival numbers
-- included: '3' at 20 and '1' at 0 make two sessions, 'x' fails, '2' at 10
-- merges them and '1' at 3 joins.
CREATE TABLE routed (v text, ts bigint);
SELECT windowing.create_pipeline('routed', 'routed', 'ts', '{}', windowing.session('10 milliseconds'),
    'array_agg(v::int) AS vs, count(DISTINCT v::int) AS dv, '
    'string_agg(v, '','' ORDER BY v DESC) FILTER (WHERE v <> ''3'') AS sv',
    max_out_of_orderness => '1 second', on_error => 'route', start => false, retention => 'keep');
INSERT INTO routed VALUES ('3', 20), ('1', 0), ('x', 5), ('2', 10), ('1', 3);
SELECT windowing.process('routed');
SELECT windowing.flush('routed');
SELECT window_start, window_end, vs, dv, sv FROM routed_results;
SELECT row_data->>'v' AS v, reason FROM routed_late;
SELECT windowing.drop_pipeline('routed', true);
DROP TABLE routed;

------------------------------------------------------------------------
-- percentile_cont, percentile_disc and mode keep their rows too, and give
-- what a query gives: the same sort, the same arithmetic.
SELECT pg_temp.create('o',
    'percentile_cont(0.3) WITHIN GROUP (ORDER BY v) AS pc, '
    'percentile_disc(0.5) WITHIN GROUP (ORDER BY t DESC) AS pd, '
    'mode() WITHIN GROUP (ORDER BY v) AS mo, '
    'percentile_cont(0.75) WITHIN GROUP (ORDER BY make_interval(secs => n)) FILTER (WHERE c) AS pci');
CALL pg_temp.drain_kinds('o', 7);
SELECT * FROM pg_temp.compare('o', 'pc, pd, mo, pci');

-- Sliding count windows combine panes of rows: window j of a key holds its
-- rows 2j - 3 to 2j in arrival order (Flink's countWindow(4, 2)), and
-- fires at its row 2j: 200 rows per key, 100 windows.
SELECT windowing.create_pipeline('counted', 'ev', 'ts', '{k}', windowing.counting(4, 2),
    'count(DISTINCT v) AS dv, array_agg(v) AS vs, string_agg(t, '','' ORDER BY t) AS st, '
    'percentile_disc(0.5) WITHIN GROUP (ORDER BY v) AS pd',
    start => false, retention => 'keep');
CALL pg_temp.drain('counted', 7, 3, NULL, false);
CREATE TEMP TABLE counted_ref AS
SELECT k, 2 * j + 1 AS window_end, count(DISTINCT v) AS dv,
       array_agg(v ORDER BY windowing_seq) AS vs,
       string_agg(t, ',' ORDER BY t, windowing_seq) AS st,
       percentile_disc(0.5) WITHIN GROUP (ORDER BY v) AS pd
FROM (SELECT ev.*, row_number() OVER (PARTITION BY k ORDER BY windowing_seq) AS rn FROM ev) e,
     generate_series((rn + 1) / 2, (rn + 3) / 2) j
GROUP BY k, j HAVING max(rn) = 2 * j;
SELECT (SELECT count(*) FROM counted_results) AS windows,
       pg_temp.differences('counted_results', 'counted_ref', 'k, window_end, dv, vs, st, pd')
         AS differences;
SELECT windowing.drop_pipeline('counted', true);
DROP TABLE counted_ref;

------------------------------------------------------------------------
-- A window stores its distinct values, not its rows: 600 rows, 7 values
-- of v besides NULL (which count skips), each kept as 12 bytes (a length
-- and a Datum) after a 16-byte header: 16 + 7 * 12 = 100 bytes, after the
-- state's flag byte and length: 1 + 4 + 100 = 105.  The last step reads
-- the state from the heap, so it stores all of it in window_state.
SELECT windowing.create_pipeline('big', 'ev', 'ts', '{}',
    windowing.tumbling('1 hour'), 'count(DISTINCT v) AS dv',
    start => false, retention => 'keep');
SELECT sum(windowing.process('big', 50)) FROM generate_series(1, 11);
SELECT windowing._forget_state(id) FROM windowing.pipeline WHERE name = 'big';
SELECT windowing.process('big', 50);
SELECT octet_length(w.state) AS state_bytes FROM windowing.window_state w
JOIN windowing.pipeline p ON p.id = w.pipeline_id WHERE p.name = 'big';
SELECT results FROM windowing.open_windows('big');
SELECT count(DISTINCT v) FROM ev;

------------------------------------------------------------------------
-- What is still refused.
SELECT windowing.create_pipeline('no', 'ev', 'ts', '{}', windowing.tumbling('1 second'),
    'percentile_cont(ARRAY[0.5, 0.9]) WITHIN GROUP (ORDER BY v)', retention => 'keep');
SELECT windowing.create_pipeline('no', 'ev', 'ts', '{}', windowing.tumbling('1 second'),
    'percentile_cont(random()) WITHIN GROUP (ORDER BY v)', retention => 'keep');
SELECT windowing.create_pipeline('no', 'ev', 'ts', '{}', windowing.tumbling('1 second'),
    'percentile_disc(1.5) WITHIN GROUP (ORDER BY v)', retention => 'keep');
SELECT windowing.create_pipeline('no', 'ev', 'ts', '{}', windowing.tumbling('1 second'),
    'rank(3) WITHIN GROUP (ORDER BY v)', retention => 'keep');
SELECT windowing.create_pipeline('no', 'ev', 'ts', '{}', windowing.tumbling('1 second'),
    'count(DISTINCT v) FILTER (WHERE v IN (SELECT 1))', retention => 'keep');

SELECT windowing.drop_pipeline(prefix || '_' || kind, true)
FROM kinds, unnest(ARRAY['f', 'd', 'a', 'ah', 'o']) prefix ORDER BY prefix, kind;
SELECT windowing.drop_pipeline('big', true);
DROP TABLE ev, kinds;
