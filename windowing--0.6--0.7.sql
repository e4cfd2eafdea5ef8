-- windowing 0.6 -> 0.7
/*
 * No change to the schema yet: the library of 0.7 refuses a database at
 * 0.6 until this script has run.
 */
\echo Use "ALTER EXTENSION windowing UPDATE" to load this file. \quit
