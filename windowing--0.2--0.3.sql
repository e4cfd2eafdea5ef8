-- windowing 0.2 -> 0.3
\echo Use "ALTER EXTENSION windowing UPDATE" to load this file. \quit
