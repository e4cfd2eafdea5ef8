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

-- Steps of step_rows rows, each committed; every third step finds no state
-- in shared memory and reads it back from window_state and state_log.
CREATE PROCEDURE pg_temp.drain(p_name text, step_rows int)
LANGUAGE plpgsql AS $$
DECLARE
    i int := 0;
BEGIN
    LOOP
        IF i % 3 = 2 THEN
            PERFORM windowing._forget_state(id) FROM windowing.pipeline WHERE name = p_name;
        END IF;
        EXIT WHEN windowing.process(p_name, step_rows) = 0;
        COMMIT;
        i := i + 1;
    END LOOP;
    PERFORM windowing.flush(p_name);
END
$$;

-- One pipeline per kind of window over "aggs", named prefix_kind.
CREATE FUNCTION pg_temp.create(prefix text, aggs text) RETURNS void
LANGUAGE sql AS $$
    SELECT windowing.create_pipeline(prefix || '_' || kind, 'ev', 'ts', '{k}', assigner, aggs,
        max_out_of_orderness => '300 milliseconds', start => false, retention => 'keep')
    FROM kinds
$$;

-- The windows of each kind that differ from GROUP BY over ref_aggs, whose
-- outputs are the columns cols.
CREATE FUNCTION pg_temp.compare(prefix text, ref_aggs text, cols text)
RETURNS TABLE (kind text, windows bigint, late bigint, differences bigint)
LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT * FROM kinds ORDER BY kind LOOP
        EXECUTE format('CREATE TEMP TABLE ref AS SELECT k, window_start, window_end, %s '
                       'FROM %s GROUP BY k, window_start, window_end', ref_aggs, r.rows_windows);
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
CALL pg_temp.drain('f_tumbling', 7);
CALL pg_temp.drain('f_session', 7);
CALL pg_temp.drain('f_hopping', 7);
CALL pg_temp.drain('f_cumulating', 7);
SELECT * FROM pg_temp.compare('f',
    'count(*) AS n, count(*) FILTER (WHERE v > 2) AS n_big, '
    'sum(v) FILTER (WHERE c) AS sum_c, max(t) FILTER (WHERE v IS NULL) AS t_nullv, '
    'avg(n) FILTER (WHERE n > 1) AS avg_n, count(v) FILTER (WHERE c IS NULL) AS n_cnull',
    'n, n_big, sum_c, t_nullv, avg_n, n_cnull');
-- windows where no row passed a FILTER
SELECT count(*) FILTER (WHERE t_nullv IS NULL) AS no_null_v,
       count(*) FILTER (WHERE sum_c IS NULL) AS no_c,
       count(*) FILTER (WHERE n_big = 0) AS no_big
FROM f_tumbling_results;

SELECT windowing.drop_pipeline('f_' || kind, true) FROM kinds ORDER BY kind;
