-- Every invalid argument gets an error that names it.
SET timezone = 'UTC';
SET datestyle = ISO;

-- Lengths must be positive.
SELECT windowing.tumble(now(), '0 seconds');
SELECT windowing.tumble(now(), '-1 hour');
SELECT windowing.tumble(1::bigint, 0);
SELECT * FROM windowing.hop(now(), '1 hour', '0 minutes');
SELECT * FROM windowing.hop(1::bigint, -5, 1);
SELECT * FROM windowing.cumulate(now(), '0 hours', '1 day');
SELECT * FROM windowing.cumulate(1::bigint, 5, 0);

-- |offset| must be smaller than size (tumble), slide (hop), max_size (cumulate).
SELECT windowing.tumble(now(), '1 day', '1 day');
SELECT windowing.tumble(now(), '1 day', '-25 hours');
SELECT windowing.tumble(1::bigint, 10, 10);
SELECT * FROM windowing.hop(1::bigint, 10, 5, 5);
SELECT * FROM windowing.hop(now(), '1 hour', '10 minutes', '-10 minutes');
SELECT * FROM windowing.cumulate(1::bigint, 5, 20, 20);

-- cumulate needs max_size to be a multiple of step.
SELECT * FROM windowing.cumulate(1::bigint, 3, 10);
SELECT * FROM windowing.cumulate(now(), '7 hours', '1 day');
SELECT * FROM windowing.cumulate(now(), '7 days', '1 month', tz => 'UTC');

-- Months need a calendar: a zone.
SELECT windowing.tumble(now(), '1 month');
SELECT windowing.tumble(now(), '1 month 2 days', tz => 'UTC');
SELECT windowing.tumble(now(), '1 day', '1 month', 'UTC');
SELECT * FROM windowing.hop(now(), '1 month', '1 day', tz => 'UTC');
SELECT * FROM windowing.hop(now(), '25 hours', '2 hours', tz => 'UTC');

-- Unknown zones.
SELECT windowing.tumble(now(), '1 day', tz => 'Mars/Olympus_Mons');
SELECT windowing.tumble_start(now(), '1 day', tz => repeat('x', 300));

-- Session gaps.
SELECT windowing.sessions(ts, 0) FROM unnest(ARRAY[1]::bigint[]) ts;
SELECT windowing.sessions(ts, '-1 second') FROM unnest(ARRAY[now()]) ts;
SELECT windowing.session(ts, '1 month') OVER () FROM unnest(ARRAY[now()]) ts;

-- Infinite timestamps belong to no window.
SELECT windowing.tumble('infinity'::timestamptz, '1 day');
SELECT * FROM windowing.hop('-infinity'::timestamptz, '1 day', '1 hour');
SELECT windowing.session(ts, '1 minute') OVER () FROM unnest(ARRAY['infinity'::timestamptz]) ts;

-- Windows that would leave the representable range.
SELECT windowing.tumble('294276-12-31 23:00+00'::timestamptz, '1 day');
SELECT windowing.tumble('4714-11-24 00:10+00 BC'::timestamptz, '1 hour');
SELECT windowing.tumble('4714-11-24 00:10+00 BC'::timestamptz, '1 hour', '30 minutes');
SELECT windowing.tumble(9223372036854775800, 10);
SELECT * FROM windowing.hop(-9223372036854775807, 10, 5);
SELECT windowing.sessions(ts, 10) FROM unnest(ARRAY[9223372036854775800]) ts;

-- Too many windows per row.
SELECT count(*) FROM windowing.hop(now(), '2 days', '1 second');
SELECT count(*) FROM windowing.hop(1::bigint, 1000000, 1);
