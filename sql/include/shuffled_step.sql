-- CALL pg_temp.shuffled_step(p, newest, came_late, undo_p, idle_p): what
-- may happen to pipeline p as a batch of rows comes, the newest row of all
-- at "newest": its state forgotten, if the batch came late (as after a
-- restart); a step of a few rows; a step of every row, rolled back in a
-- subtransaction with probability undo_p; with probability idle_p, no rows
-- for a while, so that the watermark follows the clock; a commit.  Called
-- with CALL, from a procedure, so that it may commit.
CREATE PROCEDURE pg_temp.shuffled_step(p text, newest timestamptz, came_late boolean,
                                       undo_p float8, idle_p float8)
LANGUAGE plpgsql AS $$
BEGIN
    IF came_late AND random() < 0.5 THEN
        PERFORM windowing._forget_state(id) FROM windowing.pipeline WHERE name = p;
    END IF;
    PERFORM set_config('windowing.clock', newest::text, false);
    IF random() < 0.3 THEN
        PERFORM windowing.process(p, (random() * 100)::int + 1);
    END IF;
    BEGIN
        PERFORM windowing.process(p);
        IF undo_p > 0 AND random() < undo_p THEN
            RAISE EXCEPTION 'undone';
        END IF;
    EXCEPTION WHEN raise_exception THEN
        NULL;
    END;
    IF random() < idle_p THEN
        PERFORM set_config('windowing.clock',
                           (newest + (61 + random() * 539) * interval '1 second')::text, false);
        PERFORM windowing.process(p);
    END IF;
    IF random() < 0.5 THEN
        COMMIT;
    END IF;
END
$$;
