/*
 * session_merge.h
 *		Merging of session windows, pure C like window_math.h.
 */
#ifndef WINDOWING_SESSION_MERGE_H
#define WINDOWING_SESSION_MERGE_H

#include "window_math.h"

extern bool sm_row_window(int64_t ts, int64_t gap, WmWindow *w);
extern bool sm_is_sorted(const WmWindow *w, int64_t n);
extern int64_t sm_merge(WmWindow *w, int64_t n, bool sorted);
extern int64_t sm_find(const WmWindow *sessions, int64_t n, int64_t ts);

#endif							/* WINDOWING_SESSION_MERGE_H */
