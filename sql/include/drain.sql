-- pg_temp.drain(p_name, step_rows, forget_every, max_steps, flush): runs
-- the pipeline's steps of step_rows rows, each in a transaction of its own
-- (as the worker does), at most max_steps of them; every forget_every-th
-- step finds no state in shared memory and reads it back from the heap.
-- Then flushes, unless told not to.
CREATE PROCEDURE pg_temp.drain(p_name text, step_rows int, forget_every int,
                               max_steps int DEFAULT NULL, flush boolean DEFAULT true)
LANGUAGE plpgsql AS $$
DECLARE
    i int := 0;
BEGIN
    LOOP
        EXIT WHEN i = max_steps;
        IF forget_every > 0 AND i % forget_every = forget_every - 1 THEN
            PERFORM windowing._forget_state(id) FROM windowing.pipeline WHERE name = p_name;
        END IF;
        EXIT WHEN windowing.process(p_name, step_rows) = 0;
        COMMIT;
        i := i + 1;
    END LOOP;
    IF flush THEN
        PERFORM windowing.flush(p_name);
    END IF;
    COMMIT;
END
$$;
