-- windowing 0.4 -> 0.5
\echo Use "ALTER EXTENSION windowing UPDATE" to load this file. \quit

-- From 0.5 on the library refuses to run pipelines in a database whose
-- extension is at another version (src/version.c), and its worker leaves
-- such a database for a back-off of up to half a minute: wake it at the
-- commit of this update, so pipelines resume at once.
SELECT windowing._wake_workers();
