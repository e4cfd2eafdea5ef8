-- How a pipeline's windows are kept in window_state, as its steps write
-- and read them.

-- A by-value state is stored as its flag byte and its Datum's bytes, a
-- null one as its flag alone.  States stored before, through
-- datumSerialize (a header of 4 bytes each), are read as they were.
CREATE TABLE old_form (k int, ts bigint, v int);
SELECT windowing.create_pipeline('old_s', 'old_form', 'ts', '{k}',
    windowing.tumbling('100 milliseconds'), 'count(*) AS n, sum(v) AS s, min(v) AS lo',
    start => false, retention => 'consume') > 0;
INSERT INTO old_form VALUES (1, 1000, 5), (2, 1000, NULL);
SELECT windowing.process('old_s');
-- into window_state, as a process that holds none of the state folds it
SELECT count(windowing._forget_state(id)) FROM windowing.pipeline WHERE name = 'old_s';
SELECT windowing.process('old_s');
CREATE FUNCTION pg_temp.states(p_name text) RETURNS SETOF text
LANGUAGE sql AS $$
    SELECT encode(w.state, 'hex') FROM windowing.window_state w
    JOIN windowing.pipeline p ON p.id = w.pipeline_id WHERE p.name = p_name ORDER BY 1
$$;
SELECT pg_temp.states('old_s');
UPDATE windowing.window_state w SET state = CASE encode(w.state, 'hex')
    WHEN '020100000000000000030500000000000000020500000000000000'
        THEN '\x00ffffffff010000000000000001ffffffff050000000000000000ffffffff0500000000000000'::bytea
    WHEN '0201000000000000000505'
        THEN '\x00ffffffff010000000000000001feffffff01feffffff'::bytea END
FROM windowing.pipeline p WHERE p.id = w.pipeline_id AND p.name = 'old_s';
SELECT pg_temp.states('old_s');
SELECT count(windowing._forget_state(id)) FROM windowing.pipeline WHERE name = 'old_s';
INSERT INTO old_form VALUES (1, 1050, 7), (2, 1060, 3), (3, 1200, 1);
SELECT windowing.process('old_s');
SELECT k, window_start, n, s, lo FROM old_s_results ORDER BY k;

SELECT windowing.drop_pipeline('old_s', true);
DROP TABLE old_form;
