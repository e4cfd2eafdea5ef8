-- The pipelines whose windows in window_state, or their states' bytes,
-- are not what windowing.state_size says (which the writes keep).
CREATE FUNCTION pg_temp.state_size_wrong() RETURNS bigint
LANGUAGE sql AS $$
    SELECT count(*)
    FROM (SELECT pipeline_id, count(*) AS windows, sum(octet_length(state)) AS bytes
          FROM windowing.window_state GROUP BY pipeline_id) c
    FULL JOIN windowing.state_size s USING (pipeline_id)
    WHERE coalesce(c.windows, 0) <> coalesce(s.windows, 0)
       OR coalesce(c.bytes, 0) <> coalesce(s.bytes, 0)
$$;
