/*
 * count_windows.c
 *		Count windows of the operator (Flink's countWindow): panes of rows
 *		per key, combined when a window fills.
 */
#include "compat.h"

#include "operator.h"
#include "operator_int.h"

/*
 * Count windows (Flink's countWindow(size, slide): a CountTrigger of slide
 * rows and a CountEvictor of size rows) are built from panes of g =
 * gcd(size, slide) rows (op->slice), so that every window starts and ends
 * on a pane boundary: pane p of a key holds its rows p * g + 1 .. p * g + g,
 * as the entry (key, p, p + 1) whose fire_count counts its rows.  Window k fires
 * when the key's row k * slide arrives, combines the panes of its rows
 * k * slide - size + 1 .. k * slide, and is named by row numbers:
 * [first row, last row + 1), from 1.  A key's panes are kept in order
 * (op_key_parts), so a row finds its pane at the end of the array.
 * Panes are slices of rows: consecutive windows share their combinations
 * through the key's two stacks, as sliding windows do (slices.c), so a
 * window costs a few combines, not one per pane.
 */

/*
 * The rows of a pane.  flush() negates them in the key's newest pane once
 * it fired the key's incomplete window: the window fires again only when a
 * row changes it.
 */
static int64
pane_rows(const WindowEntry *pane)
{
	return Abs(pane->fire_count);
}

/* The rows of a key so far, whose newest pane is "newest". */
static int64
key_rows(const Operator *op, const WindowEntry *newest)
{
	return newest->k.start * op->slice + pane_rows(newest);
}

/*
 * The last row of the first window to fire at or after the key's row
 * "rows": the window that row "rows" is the newest row of so far.
 */
static int64
window_last_row(const Operator *op, int64 rows)
{
	return ((rows - 1) / op->spec->rows_slide + 1) * op->spec->rows_slide;
}

/* The first pane of the window whose rows end at row "last". */
static int64
window_first_pane(const Operator *op, int64 last)
{
	return Max(last - op->spec->rows, 0) / op->slice;
}

/* Fires the window holding the key's latest row, "rows", as it is now. */
static void
fire_count_window(Operator *op, KeyEntries *sk, int64 rows)
{
	WindowEntry *last = sk->parts[sk->nparts - 1].e;
	int64		first = window_first_pane(op, window_last_row(op, rows));
	int			from PG_USED_FOR_ASSERTS_ONLY =
		sk->nparts - (int) (last->k.start - first + 1);
	WindowEntry *w = op_part_window(op, last->k.key, first * op->slice + 1, rows + 1);

	/* panes are consecutive: no gap between the first one kept and the last */
	Assert(from >= 0 && sk->parts[from].start == first);
	if (first == last->k.start)
		w->states = last->states;	/* one pane: the window is the pane */
	else
		(void) slices_combine(op, sk, first, last->k.start + 1, w->states);
	op_fire(op, w, PANE_ON_TIME);
}

/*
 * A key's new pane p, after its row p * pane: the panes before the first
 * one of its next window leave.
 */
static WindowEntry *
new_pane(Operator *op, KeyEntries *sk, bytea *key, int64 p)
{
	int64		first = window_first_pane(op, window_last_row(op, p * op->slice + 1));
	int			leaving = 0;
	WindowEntry *pane;
	bool		created;

	for (; leaving < sk->nparts && sk->parts[leaving].start < first; leaving++)
		op_leave(op, sk->parts[leaving].e);
	op_key_drop_parts(sk, leaving);
	pane = op_entry(op, key, p, p + 1, &created);
	agg_init(op->agg, pane->states);
	op_key_add_part(op, sk, sk->nparts, pane);
	return pane;
}

/* A row joins its key's newest pane; count windows ignore its time. */
static void
count_row(Operator *op, int64 seq, bool ts_null, int64 ts, int64 gap,
		  bytea *key, Datum *args, bool *argnulls)
{
	KeyEntries *sk = op_key_entries(op, key);
	KeyPart    *parts = op_key_parts(sk);
	WindowEntry *pane = sk->nparts > 0 ? parts[sk->nparts - 1].e : NULL;
	int64		rows;

	if (pane == NULL || pane_rows(pane) == op->slice)
		pane = new_pane(op, sk, key, pane ? pane->k.start + 1 : 0);
	agg_advance(op->agg, pane->states, args, argnulls);
	/* after flush() fired it incomplete, a pane may be in the stacks */
	slices_changed(sk, pane->k.start);
	pane->fire_count = pane_rows(pane) + 1;
	pane->dirty = true;
	rows = key_rows(op, pane);
	if (rows % op->spec->rows_slide == 0)
		fire_count_window(op, sk, rows);
}

/*
 * End of input: each key's incomplete count window fires as it is, once
 * for the rows it has (pane_rows).  With a slide longer than the size, the
 * key's newest rows may be in no window: then nothing fires.
 */
static void
flush_count_windows(Operator *op)
{
	HASH_SEQ_STATUS seq;
	KeyEntries *sk;

	hash_seq_init(&seq, op->keyed);
	while ((sk = hash_seq_search(&seq)) != NULL)
	{
		WindowEntry *last = op_key_parts(sk)[sk->nparts - 1].e;
		int64		rows = key_rows(op, last);
		int64		end = window_last_row(op, rows);

		if (last->fire_count < 0 || rows == end || rows <= end - op->spec->rows)
			continue;
		fire_count_window(op, sk, rows);
		last->fire_count = -last->fire_count;
		last->dirty = true;
	}
}

/*
 * open_windows(): panes are parts of windows, not windows, and a key's
 * window being filled is not listed.
 */
static void
count_open_windows(Operator *op, void (*fn) (WindowEntry *, void *), void *arg)
{
}

/* Panes of gcd(size, slide) rows. */
static void
count_init(Operator *op)
{
	op->slice = wm_gcd(op->spec->rows, op->spec->rows_slide);
}

const OpKind count_window_kind = {
	.name = "count",
	.timed = false,
	.keyed = true,
	.fresh_windows = false,
	.final_when_fired = true,
	.by_key = true,
	.init = count_init,
	.row = count_row,
	.on_watermark = op_run_timers,
	.at_end = flush_count_windows,
	.load = op_key_track_part,
	.open_windows = count_open_windows,
};
