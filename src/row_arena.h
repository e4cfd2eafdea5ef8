/*
 * row_arena.h
 *		Memory for many small rows that leave nearly in the order they came,
 *		in blocks of a huge page (row_arena.c).
 */
#ifndef WINDOWING_ROW_ARENA_H
#define WINDOWING_ROW_ARENA_H

#include "postgres.h"

typedef struct RowArena RowArena;

/* An arena with no blocks yet; its own struct is allocated in "cxt". */
extern RowArena *row_arena_create(MemoryContext cxt);

/*
 * "size" bytes, MAXALIGNed, or NULL if the arena does not take a row that
 * large or cannot map a new block (the caller allocates elsewhere).
 */
extern void *row_arena_alloc(RowArena *a, Size size);

/* Gives back a row that row_arena_alloc returned. */
extern void row_arena_free(RowArena *a, void *row);

/* Unmaps every block, rows still in them included. */
extern void row_arena_destroy(RowArena *a);

/*
 * Asks the kernel for huge pages for the whole ones in [start, start +
 * size), which is not touched yet: a hint, for other large allocations.
 */
extern void advise_huge_pages(void *start, Size size);

#endif							/* WINDOWING_ROW_ARENA_H */
