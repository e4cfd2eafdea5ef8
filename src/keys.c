/*
 * keys.c
 *		A pipeline's key columns as one bytea, and back.
 *
 * Keys travel as one bytea of their values' own bytes, so one bytea
 * identifies a key whatever its column types; keys compare by those bytes
 * (so numeric 1.0 and 1.00 are different keys).  The operator keys its
 * windows by them; the result table gets the typed values back.
 */
#include "compat.h"

#include "common/hashfn.h"
#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"

#include "keys.h"

void
keys_init(KeyColumns *k, Oid source, int n, char **names)
{
	k->n = n;
	k->names = names;
	k->types = palloc(sizeof(Oid) * Max(n, 1));
	k->lens = palloc(sizeof(int16) * Max(n, 1));
	k->byvals = palloc(sizeof(bool) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		AttrNumber	att = get_attnum(source, names[i]);

		if (att == InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("key column \"%s\" of the source no longer exists", names[i])));
		k->types[i] = get_atttype(source, att);
		get_typlenbyval(k->types[i], &k->lens[i], &k->byvals[i]);
	}
}

/* Where a key value's bytes are, and how many. */
static const char *
value_bytes(const KeyColumns *k, int i, Datum *value, int32 *len)
{
	if (k->byvals[i])
	{
		*len = sizeof(Datum);
		return (const char *) value;
	}
	if (k->lens[i] > 0)
	{
		*len = k->lens[i];
		return DatumGetPointer(*value);
	}
	if (k->lens[i] == -1)
	{
		struct varlena *v = PG_DETOAST_DATUM_PACKED(*value);

		*len = VARSIZE_ANY_EXHDR(v);
		return VARDATA_ANY(v);
	}
	*len = strlen(DatumGetCString(*value)) + 1;
	return DatumGetCString(*value);
}

/*
 * The key of a row: per column a length (-1 for NULL), then the value's
 * own bytes (detoasted).  Equal keys give equal bytes whatever the session,
 * unlike the types' send functions (text follows client_encoding), and
 * the bytes are cheap to make on the per-row path: they are made in buf,
 * whose memory is reused from row to row (the operator copies the keys it
 * keeps).
 */
bytea *
keys_encode(const KeyColumns *k, Datum *values, bool *nulls, StringInfo buf)
{
	buf->len = VARHDRSZ;
	for (int i = 0; i < k->n; i++)
	{
		int32		len = -1;
		const char *bytes = nulls[i] ? NULL : value_bytes(k, i, &values[i], &len);
		int			need = sizeof(int32) + Max(len, 0);

		if (buf->maxlen - buf->len <= need)
			enlargeStringInfo(buf, need);
		memcpy(buf->data + buf->len, &len, sizeof(int32));
		if (bytes)
			memcpy(buf->data + buf->len + sizeof(int32), bytes, len);
		buf->len += need;
	}
	SET_VARSIZE(buf->data, buf->len);
	return (bytea *) buf->data;
}

/*
 * An order of keys_encode's bytes close to that of the result table's
 * unique index, (window_end, key columns, window_start): by-value columns
 * (integers, dates, timestamps) by their signed value, the others by their
 * bytes, NULL last.  Windows of one end fire in this order, so that their
 * rows land at the right edge of that index, where a B-tree inserts
 * without descending from its root; in key bytes' order, most inserts
 * descended.  Nothing but the order of writing depends on it.
 */
int
keys_order(const bytea *a, const bytea *b, const void *arg)
{
	const KeyColumns *k = arg;
	const char *pa = VARDATA_ANY(a);
	const char *pb = VARDATA_ANY(b);

	for (int i = 0; i < k->n; i++)
	{
		int32		la;
		int32		lb;
		int			c;

		memcpy(&la, pa, sizeof(int32));
		memcpy(&lb, pb, sizeof(int32));
		pa += sizeof(int32);
		pb += sizeof(int32);
		if (la < 0 || lb < 0)
			c = (la < 0) - (lb < 0);
		else if (k->byvals[i])
		{
			Datum		x;
			Datum		y;

			memcpy(&x, pa, sizeof(Datum));
			memcpy(&y, pb, sizeof(Datum));
			c = ((intptr_t) x > (intptr_t) y) - ((intptr_t) x < (intptr_t) y);
		}
		else
		{
			c = memcmp(pa, pb, Min(la, lb));
			if (c == 0)
				c = (la > lb) - (la < lb);
		}
		if (c != 0)
			return c;
		pa += Max(la, 0);
		pb += Max(lb, 0);
	}
	return 0;
}

/*
 * The first 8 of "len" bytes as a number that orders as memcmp orders
 * them (zeros after a shorter run's end): sorts compare these first, and
 * the bytes only where they are equal.
 */
uint64
keys_bytes_prefix(const char *bytes, Size len)
{
	const unsigned char *p = (const unsigned char *) bytes;
	uint64		prefix = 0;

	for (Size i = 0; i < sizeof(uint64); i++)
		prefix = (prefix << 8) | (i < len ? p[i] : 0);
	return prefix;
}

/*
 * A key's first column as a number in keys_order's order (NULL last):
 * by-value columns by their signed value, the others by their first 8
 * bytes.  Keys whose prefixes differ compare as they do, so that ordering
 * many windows rarely reads their keys.
 */
uint64
keys_order_prefix(const bytea *key, const void *arg)
{
	const KeyColumns *k = arg;
	const char *p = VARDATA_ANY(key);
	int32		len;

	if (k->n == 0)
		return 0;
	memcpy(&len, p, sizeof(int32));
	p += sizeof(int32);
	if (len < 0)
		return PG_UINT64_MAX;
	if (k->byvals[0])
	{
		Datum		x;

		memcpy(&x, p, sizeof(Datum));
		return (uint64) x ^ ((uint64) 1 << 63);
	}
	return keys_bytes_prefix(p, len);
}

/* The typed key values back from keys_encode's bytes. */
void
keys_decode(const KeyColumns *k, bytea *key, Datum *values, bool *nulls)
{
	char	   *p = VARDATA_ANY(key);

	for (int i = 0; i < k->n; i++)
	{
		int32		len;

		memcpy(&len, p, sizeof(len));
		p += sizeof(len);
		nulls[i] = len < 0;
		if (nulls[i])
			continue;
		if (k->byvals[i])
			memcpy(&values[i], p, sizeof(Datum));
		else if (k->lens[i] == -1)
		{
			struct varlena *v = palloc(len + VARHDRSZ);

			SET_VARSIZE(v, len + VARHDRSZ);
			memcpy(VARDATA(v), p, len);
			values[i] = PointerGetDatum(v);
		}
		else
		{
			char	   *copy = palloc(len);

			memcpy(copy, p, len);
			values[i] = PointerGetDatum(copy);
		}
		p += len;
	}
}

/*
 * The key group of a key, of ngroups: Flink's max parallelism.  A
 * pipeline's state is partitioned by it, so that disjoint groups can go to
 * different workers without rewriting state; the hash (32-bit FNV-1a over
 * the key's bytes) is the same on every platform, since it is stored.
 */
int
keys_group(const bytea *key, int ngroups)
{
	const unsigned char *p = (const unsigned char *) VARDATA_ANY(key);
	uint32		h = 2166136261u;

	for (Size i = 0; i < VARSIZE_ANY_EXHDR(key); i++)
		h = (h ^ p[i]) * 16777619u;
	return (int) (h % (uint32) ngroups);
}

/*
 * The part of a pipeline of "parallelism" parts that steps key group
 * "group" of ngroups: as Flink's key-group ranges, each part steps a run of
 * consecutive groups, so that a change of parallelism moves whole groups.
 */
int
keys_part(int group, int ngroups, int parallelism)
{
	return (int) ((int64) group * parallelism / ngroups);
}

PG_FUNCTION_INFO_V1(windowing_key_group);

/* _key_group(key, ngroups): keys_group for SQL. */
Datum
windowing_key_group(PG_FUNCTION_ARGS)
{
	int32		n = PG_GETARG_INT32(1);

	if (n < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of key groups must be positive")));
	PG_RETURN_INT16((int16) keys_group(PG_GETARG_BYTEA_PP(0), n));
}

PG_FUNCTION_INFO_V1(windowing_key_part);

/* _key_part(group, ngroups, parallelism): keys_part for SQL. */
Datum
windowing_key_part(PG_FUNCTION_ARGS)
{
	int32		group = PG_GETARG_INT32(0);
	int32		ngroups = PG_GETARG_INT32(1);
	int32		parallelism = PG_GETARG_INT32(2);

	if (ngroups < 1 || group < 0 || group >= ngroups || parallelism < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("key group %d of %d has no part among %d", group, ngroups, parallelism)));
	PG_RETURN_INT32(keys_part(group, ngroups, parallelism));
}

/* Whether two keys are the same key: the same bytes. */
bool
keys_equal(const bytea *a, const bytea *b)
{
	return VARSIZE_ANY_EXHDR(a) == VARSIZE_ANY_EXHDR(b) &&
		memcmp(VARDATA_ANY(a), VARDATA_ANY(b), VARSIZE_ANY_EXHDR(a)) == 0;
}

/* A key's hash: of its bytes, whatever its header. */
uint32
keys_hash(const bytea *key)
{
	return hash_bytes((const unsigned char *) VARDATA_ANY(key), VARSIZE_ANY_EXHDR(key));
}

static uint32
key_hash(const void *key, Size keysize)
{
	return keys_hash(*(bytea *const *) key);
}

static int
key_match(const void *a, const void *b, Size keysize)
{
	return !keys_equal(*(bytea *const *) a, *(bytea *const *) b);
}

/*
 * A table of entries led by a key (a bytea pointer, hashed and compared by
 * the bytes it points at), in memory context cxt.
 */
HTAB *
keys_table(const char *name, Size entrysize, MemoryContext cxt)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(bytea *);
	ctl.entrysize = entrysize;
	ctl.hash = key_hash;
	ctl.match = key_match;
	ctl.hcxt = cxt;
	return hash_create(name, 1024, &ctl,
					   HASH_ELEM | HASH_FUNCTION | HASH_COMPARE | HASH_CONTEXT);
}
