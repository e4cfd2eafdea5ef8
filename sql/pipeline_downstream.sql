-- A pipeline reading another's results takes its watermark
-- (watermark_from), as Flink passes an operator's watermark downstream:
-- hours made of minutes fire when the minutes are final.  Hand-worked, on
-- bigint time (milliseconds): "minutes" of 10 ms, "hours" of 100 ms.
\set SHOW_CONTEXT never
CREATE TABLE ds_clicks (page text, ts bigint);
SELECT NULL::void FROM windowing.create_pipeline('minutes', 'ds_clicks', 'ts', '{page}',
    windowing.tumbling('10 milliseconds'), emit => 'append', start => false, retention => 'keep');
SELECT NULL::void FROM windowing.create_pipeline('hours', 'minutes_results', 'window_time', '{page}',
    windowing.tumbling('100 milliseconds'), 'sum(count) AS clicks, count(*) AS minutes',
    emit => 'append', start => false, retention => 'keep', watermark_from => 'minutes');
-- The same without the upstream's watermark: its own, from window_time.
SELECT NULL::void FROM windowing.create_pipeline('hours_guess', 'minutes_results', 'window_time', '{page}',
    windowing.tumbling('100 milliseconds'), 'sum(count) AS clicks, count(*) AS minutes',
    emit => 'append', start => false, retention => 'keep');
SELECT name, time_column, max_out_of_orderness, watermark_from FROM windowing.pipelines
WHERE name LIKE 'hours%' ORDER BY name;

-- The minutes' watermark reaches 107: [0, 10), [10, 20) and [90, 100)
-- fire.  hours takes 107 once it has read them, and fires [0, 100) with
-- all of its minutes; hours_guess has seen window_time 99 at most, and
-- waits for a later minute.
INSERT INTO ds_clicks VALUES ('a', 1), ('a', 5), ('b', 12), ('a', 95), ('a', 108);
SELECT windowing.process('minutes');
SELECT page, window_start, count FROM minutes_results ORDER BY window_start, page;
SELECT windowing.process('hours'), windowing.process('hours_guess');
SELECT page, window_start, clicks, minutes FROM hours_results ORDER BY window_start, page;
SELECT count(*) FROM hours_guess_results;
SELECT name, watermark_ms FROM windowing.pipeline_stats WHERE name LIKE 'hours%' ORDER BY name;

-- In one transaction, a step of minutes and then of hours: the tick of
-- hours leaves out the rows this transaction wrote, and so the watermark
-- it wrote too; after the commit, the next step takes both.
INSERT INTO ds_clicks VALUES ('a', 250);
BEGIN;
SELECT windowing.process('minutes');
SELECT windowing.process('hours');
SELECT count(*) FROM hours_results;
COMMIT;
SELECT windowing.process('hours');
SELECT page, window_start, clicks, minutes FROM hours_results ORDER BY window_start, page;

-- The minutes' watermark reaches 419, firing four minutes.  A step cut
-- short inside a tick takes the watermark only once the tick is read to
-- its end: here the third step, which finds no row left.
INSERT INTO ds_clicks VALUES ('b', 301), ('b', 302), ('a', 311), ('b', 321), ('a', 420);
SELECT windowing.process('minutes');
SELECT windowing.process('hours', max_rows => 2);
SELECT name, watermark_ms FROM windowing.pipeline_stats WHERE name = 'hours';
SELECT windowing.process('hours', max_rows => 2);
SELECT count(*) FROM hours_results;
SELECT windowing.process('hours');
SELECT name, watermark_ms FROM windowing.pipeline_stats WHERE name = 'hours';
SELECT page, window_start, clicks, minutes FROM hours_results ORDER BY window_start, page;

-- Refused.
CREATE TABLE ds_other (page text, ts bigint);
SELECT NULL::void FROM windowing.create_pipeline('upserts', 'ds_other', 'ts', '{page}',
    windowing.tumbling('10 milliseconds'), start => false, retention => 'keep');
SELECT windowing.create_pipeline('bad', 'minutes_results', 'window_time', '{page}',
    windowing.tumbling('1 second'), retention => 'keep', watermark_from => 'nope');
SELECT windowing.create_pipeline('bad', 'ds_clicks', 'ts', '{page}',
    windowing.tumbling('1 second'), retention => 'keep', watermark_from => 'minutes');
SELECT windowing.create_pipeline('bad', 'upserts_results', 'window_time', '{page}',
    windowing.tumbling('1 second'), retention => 'keep', watermark_from => 'upserts');
SELECT windowing.create_pipeline('bad', 'minutes_results', 'window_start', '{page}',
    windowing.tumbling('1 second'), retention => 'keep', watermark_from => 'minutes');
SELECT windowing.create_pipeline('bad', 'minutes_results', 'window_time', '{page}',
    windowing.tumbling('1 second'), retention => 'keep', watermark_from => 'minutes',
    max_out_of_orderness => '1 second');
SELECT windowing.create_pipeline('bad', 'minutes_results', 'window_time', '{page}',
    windowing.tumbling('1 second'), retention => 'keep', watermark_from => 'minutes',
    watermark_column => 'window_end');

SELECT windowing.drop_pipeline(name, drop_tables => true) FROM windowing.pipelines
WHERE name IN ('hours', 'hours_guess', 'upserts');
SELECT windowing.drop_pipeline('minutes', drop_tables => true);
DROP TABLE ds_clicks, ds_other;
