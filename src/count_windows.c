/*
 * count_windows.c
 *		Count windows of the operator (Flink's countWindow): panes of rows
 *		per key, combined when a window fills.
 */
#include "compat.h"

#include "operator.h"
#include "operator_int.h"

/*
 * Count windows (Flink's countWindow(size, slide)) are built from panes of
 * slide rows: pane p of a key holds its rows p * slide .. p * slide +
 * slide - 1, as the entry (key, p, p + 1) whose fire_count counts its rows.
 * Window k, fired when pane k - 1 fills, combines the last size / slide
 * panes and is named by row numbers: [first row, last row + 1), from 1.
 */
static WindowEntry *
newest_pane(KeyEntries *sk)
{
	WindowEntry *newest = NULL;
	ListCell   *lc;

	foreach(lc, sk->live)
	{
		WindowEntry *e = lfirst(lc);

		if (newest == NULL || e->k.start > newest->k.start)
			newest = e;
	}
	return newest;
}

static int
pane_order(const ListCell *a, const ListCell *b)
{
	int64		x = ((WindowEntry *) lfirst(a))->k.start;
	int64		y = ((WindowEntry *) lfirst(b))->k.start;

	return (x > y) - (x < y);
}

static void
fire_count_window(Operator *op, KeyEntries *sk, WindowEntry *last)
{
	int64		panes = op->spec->rows / op->spec->rows_slide;
	int64		first = Max(last->k.start - panes + 1, 0);
	WindowEntry *w = op_part_window(op, last->k.key, first * op->spec->rows_slide + 1,
									last->k.start * op->spec->rows_slide + last->fire_count + 1);
	ListCell   *lc;

	if (panes == 1)
		w->states = last->states;	/* one pane: the window is the pane */
	else
	{
		agg_init(op->agg, w->states);
		list_sort(sk->live, pane_order);
		foreach(lc, sk->live)
		{
			WindowEntry *pane = lfirst(lc);

			if (pane->k.start >= first)
				agg_combine(op->agg, w->states, pane->states);
		}
	}
	op_fire(op, w);
	((Firing *) llast(op->firings))->is_final = true;
}

void
count_row(Operator *op, bytea *key, Datum *args, bool *argnulls)
{
	KeyEntries *sk = op_key_entries(op, key);
	WindowEntry *pane = newest_pane(sk);
	int64		panes = op->spec->rows / op->spec->rows_slide;

	if (pane == NULL || pane->fire_count == op->spec->rows_slide)
	{
		int64		p = pane ? pane->k.start + 1 : 0;
		List	   *keep = NIL;
		ListCell   *lc;
		bool		created;

		/* panes the next windows no longer need leave */
		foreach(lc, sk->live)
		{
			WindowEntry *old = lfirst(lc);

			if (old->k.start > p - panes)
				keep = lappend(keep, old);
			else
				op_leave(op, old);
		}
		pane = op_entry(op, key, p, p + 1, &created);
		agg_init(op->agg, pane->states);
		sk->live = lappend(keep, pane);
	}
	agg_advance(op->agg, pane->states, args, argnulls);
	pane->fire_count++;
	pane->dirty = true;
	if (pane->fire_count == op->spec->rows_slide)
		fire_count_window(op, sk, pane);
}

/* End of input: each key's incomplete count window fires as it is. */
void
flush_count_windows(Operator *op)
{
	HASH_SEQ_STATUS seq;
	KeyEntries *sk;

	hash_seq_init(&seq, op->keyed);
	while ((sk = hash_seq_search(&seq)) != NULL)
	{
		WindowEntry *last = newest_pane(sk);

		if (last && last->fire_count > 0 && last->fire_count < op->spec->rows_slide)
			fire_count_window(op, sk, last);
	}
}
