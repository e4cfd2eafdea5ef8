-- windowing 0.22 -> 0.23

/* ---- window states in a shorter form ---- */

-- The schema does not change.  The library stores a by-value aggregate
-- state as its flag byte and its Datum's bytes, and a null one as its flag
-- alone, in window_state and state_log; it reads the states older
-- libraries stored as well.  A library of 0.22 cannot read the states
-- this one stores: the new version keeps the two apart.
