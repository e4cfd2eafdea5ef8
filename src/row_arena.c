/*
 * row_arena.c
 *		Memory for many small rows that leave nearly in the order they came,
 *		in blocks of a huge page.
 *
 * An interval join keeps each row it reads until the watermark passes it:
 * at a million keys, hundreds of thousands of rows of a hundred or two
 * bytes, most of them leaving a few steps after they came.  In memory
 * contexts of 4kB pages, the first steps of such a join fault in every
 * page of its rows one at a time (a quarter of their time on this kind of
 * machine), and every row met or leaving costs the processor a translation
 * of its own page.  Here rows are carved in order out of blocks of 2MB,
 * aligned so that the kernel can back each with one huge page where it
 * gives them to memory that asks (transparent huge pages in "madvise" or
 * "always" mode); elsewhere they are plain pages, as before.
 *
 * A block counts its live rows, and goes once it has none: to a short list
 * of empty blocks that new rows take first (rows come as fast as they
 * leave, and a block given back to the kernel would be faulted in again),
 * or back to the kernel beyond that.  A row finds its block by rounding its
 * address down.  The memory is mapped directly rather than through a
 * memory context, which would neither align nor keep it; the owner unmaps
 * it with row_arena_destroy.
 */
#include "compat.h"

#include <sys/mman.h>

#include "lib/ilist.h"

#include "row_arena.h"

#define BLOCK_BYTES (2 * 1024 * 1024)

/* A row larger than this takes memory elsewhere. */
#define ROW_MAX (BLOCK_BYTES / 16)

/* Empty blocks kept for new rows. */
#define SPARE_BLOCKS 8

typedef struct ArenaBlock
{
	dlist_node	node;			/* in the arena's blocks, or its spares */
	int64		live;			/* rows handed out and not given back */
	Size		used;			/* bytes handed out, this header included */
} ArenaBlock;

#define BLOCK_HEAD MAXALIGN(sizeof(ArenaBlock))

struct RowArena
{
	dlist_head	blocks;			/* in use, the newest (current) first */
	dlist_head	spares;			/* empty */
	int			nspares;
};

void
advise_huge_pages(void *start, Size size)
{
#ifdef MADV_HUGEPAGE
	uintptr_t	from = TYPEALIGN(BLOCK_BYTES, (uintptr_t) start);
	uintptr_t	to = TYPEALIGN_DOWN(BLOCK_BYTES, (uintptr_t) start + size);

	if (to > from)
		(void) madvise((void *) from, to - from, MADV_HUGEPAGE);
#endif
}

RowArena *
row_arena_create(MemoryContext cxt)
{
	RowArena   *a = MemoryContextAllocZero(cxt, sizeof(RowArena));

	dlist_init(&a->blocks);
	dlist_init(&a->spares);
	return a;
}

/*
 * A new block, aligned to its size: twice its size is mapped, and what lies
 * outside the aligned block unmapped.
 */
static ArenaBlock *
map_block(void)
{
	char	   *mapped = mmap(NULL, 2 * BLOCK_BYTES, PROT_READ | PROT_WRITE,
							  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char	   *start;

	if (mapped == MAP_FAILED)
		return NULL;
	start = (char *) TYPEALIGN(BLOCK_BYTES, mapped);
	if (start > mapped)
		(void) munmap(mapped, start - mapped);
	(void) munmap(start + BLOCK_BYTES, mapped + BLOCK_BYTES - start);
	advise_huge_pages(start, BLOCK_BYTES);
	return (ArenaBlock *) start;
}

/* The block rows go into now: the current one, or a spare, or a new one. */
static ArenaBlock *
block_for(RowArena *a, Size size)
{
	ArenaBlock *b;

	if (!dlist_is_empty(&a->blocks))
	{
		b = dlist_head_element(ArenaBlock, node, &a->blocks);
		if (b->used + size <= BLOCK_BYTES)
			return b;
		/* full, but all its rows left: it starts over */
		if (b->live == 0)
		{
			b->used = BLOCK_HEAD;
			return b;
		}
	}
	if (!dlist_is_empty(&a->spares))
	{
		b = dlist_container(ArenaBlock, node, dlist_pop_head_node(&a->spares));
		a->nspares--;
	}
	else if ((b = map_block()) == NULL)
		return NULL;
	b->live = 0;
	b->used = BLOCK_HEAD;
	dlist_push_head(&a->blocks, &b->node);
	return b;
}

void *
row_arena_alloc(RowArena *a, Size size)
{
	ArenaBlock *b;
	char	   *row;

	size = MAXALIGN(size);
	if (size > ROW_MAX || (b = block_for(a, size)) == NULL)
		return NULL;
	row = (char *) b + b->used;
	b->used += size;
	b->live++;
	return row;
}

void
row_arena_free(RowArena *a, void *row)
{
	ArenaBlock *b = (ArenaBlock *) TYPEALIGN_DOWN(BLOCK_BYTES, row);

	/* the current block stays, for the next rows, even if empty */
	if (--b->live > 0 || b == dlist_head_element(ArenaBlock, node, &a->blocks))
		return;
	dlist_delete(&b->node);
	if (a->nspares < SPARE_BLOCKS)
	{
		dlist_push_head(&a->spares, &b->node);
		a->nspares++;
	}
	else
		(void) munmap(b, BLOCK_BYTES);
}

void
row_arena_destroy(RowArena *a)
{
	dlist_head *lists[2] = {&a->blocks, &a->spares};

	for (int i = 0; i < 2; i++)
		while (!dlist_is_empty(lists[i]))
			(void) munmap(dlist_container(ArenaBlock, node, dlist_pop_head_node(lists[i])),
						  BLOCK_BYTES);
	pfree(a);
}
