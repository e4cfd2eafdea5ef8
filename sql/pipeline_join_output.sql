-- How an interval join's pairs reach its result table: in bulk where its
-- select list is expressions over the two rows and the table is plain, by
-- an INSERT statement otherwise (a subquery, a rule, a trigger); the same
-- rows either way, with the result table's defaults and constraints.
\set SHOW_CONTEXT never
SET client_min_messages = warning;
SELECT windowing.create_queue('jo_a', 'k int, ts bigint, v text, n numeric');
SELECT windowing.create_queue('jo_b', 'k int, ts bigint, w text');
CREATE FUNCTION pg_temp.feed() RETURNS void LANGUAGE sql AS $$
    INSERT INTO jo_a VALUES (1, 100, 'a', 1.5), (2, 100, 'b', NULL), (3, 100, NULL, 3);
    INSERT INTO jo_b VALUES (1, 105, 'x'), (1, 108, NULL), (2, 130, 'y'), (4, 100, 'z');
$$;
-- the pairs' columns each computed from both sides; a full join, so the
-- rows that met nothing come with the other side NULL
CREATE FUNCTION pg_temp.pairs(name text, columns text) RETURNS void LANGUAGE sql AS $$
    SELECT windowing.create_join_pipeline(name, 'jo_a', 'ts', '{k}', 'jo_b', 'ts', '{k}', columns,
        lower => '0', upper => '10 milliseconds', join_type => 'full');
$$;
SELECT pg_temp.pairs('jo_bulk',
    'coalesce(jo_a.k, jo_b.k) AS k, jo_a.v || ''/'' || jo_b.w AS vw, jo_a.n * 2 AS n2,
     upper(jo_b.w) AS big, jo_b.ts - jo_a.ts AS gap,
     CASE WHEN jo_a.k IS NULL THEN ''right only'' WHEN jo_b.k IS NULL THEN ''left only''
          ELSE ''both'' END AS what');
-- a column the select list does not give takes its default, as in INSERT
ALTER TABLE jo_bulk_results ADD COLUMN id bigserial, ADD COLUMN note text DEFAULT 'paired';
SELECT pg_temp.feed();
SELECT windowing.process('jo_bulk');
SELECT windowing.flush('jo_bulk');
SELECT * FROM jo_bulk_results ORDER BY k, vw, what;
SELECT count(DISTINCT id) FROM jo_bulk_results;

-- a subquery in the select list: by statement, the same pairs
SELECT pg_temp.pairs('jo_sub',
    'coalesce(jo_a.k, jo_b.k) AS k, jo_a.v || ''/'' || jo_b.w AS vw, jo_a.n * 2 AS n2,
     upper(jo_b.w) AS big, jo_b.ts - jo_a.ts AS gap,
     (SELECT CASE WHEN jo_a.k IS NULL THEN ''right only'' WHEN jo_b.k IS NULL THEN ''left only''
          ELSE ''both'' END) AS what');
ALTER TABLE jo_sub_results ADD COLUMN id bigserial, ADD COLUMN note text DEFAULT 'paired';
SELECT windowing.process('jo_sub');
SELECT windowing.flush('jo_sub');
SELECT k, vw, n2, big, gap, what, note FROM jo_bulk_results
EXCEPT ALL SELECT k, vw, n2, big, gap, what, note FROM jo_sub_results;
SELECT count(*) FROM jo_sub_results;

-- a rule on the result table is applied, and a trigger fires, for each pair
SELECT pg_temp.pairs('jo_rule', 'coalesce(jo_a.k, jo_b.k) AS k, jo_a.v, jo_b.w');
CREATE TABLE jo_rule_seen (k int, v text, w text);
CREATE RULE jo_rule_also AS ON INSERT TO jo_rule_results DO ALSO
    INSERT INTO jo_rule_seen VALUES (NEW.k, NEW.v, NEW.w);
SELECT pg_temp.pairs('jo_trigger', 'coalesce(jo_a.k, jo_b.k) AS k, jo_a.v, jo_b.w');
CREATE TABLE public.jo_trigger_seen (k int, v text, w text);
CREATE FUNCTION pg_temp.seen() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.jo_trigger_seen VALUES (NEW.k, NEW.v, NEW.w);
    RETURN NEW;
END
$$;
CREATE TRIGGER jo_seen AFTER INSERT ON jo_trigger_results FOR EACH ROW EXECUTE FUNCTION pg_temp.seen();
SELECT windowing.process('jo_rule'), windowing.process('jo_trigger');
SELECT windowing.flush('jo_rule'), windowing.flush('jo_trigger');
SELECT (SELECT count(*) FROM jo_rule_results) AS rule_results, (SELECT count(*) FROM jo_rule_seen) AS rule_seen,
       (SELECT count(*) FROM jo_trigger_results) AS trigger_results,
       (SELECT count(*) FROM jo_trigger_seen) AS trigger_seen;
SELECT * FROM jo_rule_seen EXCEPT ALL SELECT * FROM jo_trigger_seen;

-- a pair that breaks the result table's constraints fails the step as
-- INSERT would, and nothing of it is written: the next step after the
-- constraint is fixed writes every pair once
SELECT pg_temp.pairs('jo_check', 'jo_a.k, jo_a.v, jo_b.w');
ALTER TABLE jo_check_results ADD CHECK (v <> 'a');
SELECT windowing.process('jo_check');
SELECT count(*) FROM jo_check_results;
-- the pairs of key 1 now pass; the rows that met nothing, at the end,
-- break the NOT NULL of k where only the right side has one
ALTER TABLE jo_check_results ALTER COLUMN k SET NOT NULL, DROP CONSTRAINT jo_check_results_v_check;
SELECT windowing.process('jo_check');
SELECT windowing.flush('jo_check');
SELECT count(*) FROM jo_check_results;
ALTER TABLE jo_check_results ALTER COLUMN k DROP NOT NULL;
SELECT windowing.flush('jo_check');
SELECT * FROM jo_check_results ORDER BY k, v, w;
-- an error in the select list, likewise
SELECT pg_temp.pairs('jo_error', 'jo_a.k, jo_a.n / (jo_b.ts - jo_a.ts - 5) AS rate');
SELECT windowing.process('jo_error');
SELECT count(*) FROM jo_error_results;

-- a dropped column of the result table is skipped
SELECT pg_temp.pairs('jo_dropped', 'coalesce(jo_a.k, jo_b.k) AS k, jo_b.w');
ALTER TABLE jo_dropped_results ADD COLUMN extra int, ADD COLUMN tail text DEFAULT 'tail';
ALTER TABLE jo_dropped_results DROP COLUMN extra;
SELECT windowing.process('jo_dropped');
SELECT windowing.flush('jo_dropped');
SELECT * FROM jo_dropped_results ORDER BY k, w;

-- a step rolled back to a savepoint, or in an exception block, writes
-- nothing; the step after it writes each pair once
SELECT pg_temp.pairs('jo_undo', 'coalesce(jo_a.k, jo_b.k) AS k, jo_a.v, jo_b.w');
BEGIN;
SAVEPOINT before_step;
SELECT windowing.process('jo_undo');
SELECT count(*) AS written FROM jo_undo_results;
ROLLBACK TO SAVEPOINT before_step;
SELECT count(*) AS after_rollback FROM jo_undo_results;
DO $$
BEGIN
    PERFORM windowing.process('jo_undo');
    RAISE EXCEPTION 'undone';
EXCEPTION WHEN raise_exception THEN
    NULL;
END
$$;
SELECT count(*) AS after_exception FROM jo_undo_results;
SELECT windowing.process('jo_undo');
COMMIT;
SELECT windowing.flush('jo_undo');
SELECT * FROM jo_undo_results ORDER BY k, v, w;
SELECT count(windowing.drop_pipeline(name, drop_tables => true)) AS dropped
FROM windowing.pipelines WHERE name LIKE 'jo\_%';
DROP TABLE jo_a, jo_b, jo_rule_seen, jo_trigger_seen;
