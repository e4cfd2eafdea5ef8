/*
 * prefetch.h
 *		Asking the processor to bring memory towards its cache ahead of use.
 *
 * With millions of kept rows, most loads of a row or of its key's slot miss
 * the caches; issuing them a few rows ahead lets the misses overlap.
 * Without the compiler's builtin it is a no-op: only slower.
 */
#ifndef WINDOWING_PREFETCH_H
#define WINDOWING_PREFETCH_H

#if defined(__GNUC__) || defined(__clang__)
#define prefetch_memory(p) __builtin_prefetch(p)
#else
#define prefetch_memory(p) ((void) (p))
#endif

#endif							/* WINDOWING_PREFETCH_H */
