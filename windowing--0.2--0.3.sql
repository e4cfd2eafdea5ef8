-- windowing 0.2 -> 0.3
\echo Use "ALTER EXTENSION windowing UPDATE" to load this file. \quit

-- Window states and pipeline definitions are written by the extension's
-- code only.  A forged state would reach the aggregates' C functions as if
-- they had made it, and a changed definition would misread the stored
-- states; a row's id is never chosen, so it never meets another's state.
-- Users keep what pause, resume and their steps write as them.
REVOKE INSERT, UPDATE, DELETE ON windowing.window_state FROM PUBLIC;
REVOKE INSERT, UPDATE ON windowing.pipeline FROM PUBLIC;
GRANT INSERT (name, owner, source, time_column, time_type, key_columns, assigner, aggregates,
              max_out_of_orderness, allowed_lateness, result_table, late_table, emit, state,
              idle_timeout)
    ON windowing.pipeline TO PUBLIC;
GRANT UPDATE (state, tick_lo, tick_hi, last_seq, watermark, max_seen, steps, rows_consumed,
              windows_fired, late_routed, late_dropped, last_step_at, last_row_at, last_error,
              failures)
    ON windowing.pipeline TO PUBLIC;
