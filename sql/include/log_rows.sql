-- pg_temp.log_rows(p_name): how many steps' changes state_log holds for
-- the pipeline (a step's take as many rows of up to a page as they need).
CREATE FUNCTION pg_temp.log_rows(p_name text) RETURNS bigint
LANGUAGE sql AS $$
    SELECT count(DISTINCT step) FROM windowing.state_log l
    JOIN windowing.pipeline p ON p.id = l.pipeline_id WHERE p.name = p_name
$$;
