-- pg_temp.log_rows(p_name): how many state_log rows the pipeline has.
CREATE FUNCTION pg_temp.log_rows(p_name text) RETURNS bigint
LANGUAGE sql AS $$
    SELECT count(*) FROM windowing.state_log l
    JOIN windowing.pipeline p ON p.id = l.pipeline_id WHERE p.name = p_name
$$;
