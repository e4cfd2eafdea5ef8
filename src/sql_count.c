/*
 * sql_count.c
 *		count_window(): Flink's countWindow(size, slide) as a window function.
 *
 * Flink fires a count window every slide rows of a key with the last size
 * rows.  Numbering those firings 1, 2, ... gives each row the list of
 * windows it is in, which is all a GROUP BY needs; the numbering only
 * depends on the row's position in its partition, so no state is kept.
 * Windows at the end of a partition that Flink would not have fired yet
 * (fewer than slide rows since the last firing) are returned too; the
 * README shows how to keep only complete ones.
 */
#include "compat.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "windowapi.h"

#include "spec.h"

static int64
positive_arg(WindowObject win, int argno, const char *what, bool *isnull)
{
	int64		v = DatumGetInt64(WinGetFuncArgCurrent(win, argno, isnull));

	if (!*isnull && v <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be greater than zero", what)));
	return v;
}

PG_FUNCTION_INFO_V1(windowing_count_window);

Datum
windowing_count_window(PG_FUNCTION_ARGS)
{
	WindowObject win = PG_WINDOW_OBJECT();
	bool		sizenull;
	bool		slidenull;
	int64		size = positive_arg(win, 0, "size", &sizenull);
	int64		slide = positive_arg(win, 1, "slide", &slidenull);
	int64		first;
	int64		last;
	Datum	   *ids;

	if (sizenull)
		PG_RETURN_NULL();
	if (slidenull)
		slide = size;
	spec_check_window_count(size / slide + (size % slide != 0), "count_window");
	if (!wm_count_windows(WinGetCurrentPosition(win), size, slide,
						  &first, &last))
		spec_report_out_of_range(false);
	ids = palloc(sizeof(Datum) * Max(last - first + 1, 1));
	for (int64 k = first; k <= last; k++)
		ids[k - first] = Int64GetDatum(k);
	PG_RETURN_ARRAYTYPE_P(construct_array(ids, (int) (last - first + 1),
										  INT8OID, sizeof(int64), true,
										  TYPALIGN_DOUBLE));
}
