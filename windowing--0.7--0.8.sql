-- windowing 0.7 -> 0.8
/*
 * Window state is kept by key in the memory of the process that steps a
 * pipeline, and a step reads from the heap only the windows it needs: those
 * of the keys its rows name (by window_state's primary key) and those whose
 * timers its watermark reaches, found by their end through a new index.
 */
\echo Use "ALTER EXTENSION windowing UPDATE" to load this file. \quit

CREATE INDEX window_state_by_end ON windowing.window_state (pipeline_id, window_end);
