-- pg_temp.differences(a, b, cols): rows of table a not in table b and the
-- other way round, over the columns cols; 0 when they hold the same rows.
CREATE FUNCTION pg_temp.differences(a text, b text, cols text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM ((SELECT %3$s FROM %1$I EXCEPT ALL SELECT %3$s FROM %2$I) '
                   'UNION ALL (SELECT %3$s FROM %2$I EXCEPT ALL SELECT %3$s FROM %1$I)) d', a, b, cols)
    INTO n;
    RETURN n;
END
$$;
