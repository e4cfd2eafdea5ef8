-- windowing 0.10 -> 0.11
/*
 * Room on window_state's pages for the updates that fold the state log
 * into it, so that they are HOT and add no index entries.  Pages written
 * from now on keep it; a VACUUM FULL of windowing.window_state gives it to
 * the rows there are.
 */
ALTER TABLE windowing.window_state SET (fillfactor = 70);
