-- windowing 0.20 -> 0.21

/* ---- A step's state_log changes in rows of a page, not TOAST chunks ---- */

-- A step that changed many windows wrote its changes as one row, which
-- TOAST cut into chunks of 2kB, each a row and an index entry of its own.
-- Its changes now go on in parts: rows of at most a page, each kept in
-- its page.  The rows already there are each a whole step's, part 0.
ALTER TABLE windowing.state_log ADD COLUMN part int NOT NULL DEFAULT 0;
ALTER TABLE windowing.state_log DROP CONSTRAINT state_log_pkey;
ALTER TABLE windowing.state_log ADD PRIMARY KEY (pipeline_id, step, part);
