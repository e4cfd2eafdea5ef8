-- windowing 0.17 -> 0.18

/* ---- A shard's pipeline knows the distributed pipeline it was made for ---- */

-- A distributed pipeline dropped and made again under the same name within
-- a second could keep the shards' pipelines of the first (matched by
-- name), with its definition and state, and they wrote the first's input
-- watermarks for the second.  A shard's pipeline now records the id of its
-- distributed pipeline, and the shard's id, which was read off its name.
ALTER TABLE windowing.pipeline ADD COLUMN shard_of_id int, ADD COLUMN shard_id bigint;
UPDATE windowing.pipeline SET shard_id = substr(name, length(shard_of) + 2)::bigint
WHERE shard_of IS NOT NULL;
GRANT UPDATE (shard_of_id, shard_id) ON windowing.pipeline TO PUBLIC;

DROP FUNCTION windowing._shard_carries(regclass, text);

-- Whether a shard still carries the definition of distributed pipeline
-- "pipeline_name" whose id is "pipeline_id" (the trigger drop_pipeline()
-- drops): a pipeline dropped and made again under the same name has
-- another id.  A shard's pipeline made before 0.18 knows no id, nor does
-- a definition of then.
CREATE FUNCTION windowing._shard_carries(shard regclass, pipeline_name text, pipeline_id int)
RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
AS $$
SELECT EXISTS (SELECT FROM pg_trigger t
               CROSS JOIN LATERAL (SELECT convert_from(substr(t.tgargs, 1, length(t.tgargs) - 1),
                                                       'UTF8')::jsonb AS def) d
               WHERE t.tgrelid = shard AND t.tgfoid = 'windowing._shard_pipeline()'::regprocedure
                 AND t.tgnargs = 1
                 AND d.def ->> 'name' = pipeline_name
                 AND (d.def ->> 'id')::int IS NOT DISTINCT FROM pipeline_id)
$$;

CREATE OR REPLACE FUNCTION windowing._create_distributed_pipeline(name text, source regclass, res regclass,
                                                       late regclass, definition jsonb)
RETURNS int
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unsafe text := current_setting('citus.enable_unsafe_triggers');
    new_id int;
BEGIN
    INSERT INTO windowing.distributed_pipeline (name, owner, source, result_table, late_table, definition)
    VALUES (name, current_user::regrole, source, res, late, definition)
    RETURNING id INTO new_id;
    PERFORM windowing._shard_progress_reset(name);
    PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %s FOR EACH STATEMENT '
                   'EXECUTE FUNCTION windowing._shard_pipeline(%L)',
                   'windowing_pipeline_' || new_id, source,
                   definition || jsonb_build_object('name', name, 'id', new_id, 'owner', current_user,
                                                    'source', source::text, 'result_table', res::text,
                                                    'late_table', late::text));
    PERFORM set_config('citus.enable_unsafe_triggers', unsafe, true);
    RETURN new_id;
END
$$;

CREATE OR REPLACE FUNCTION windowing._shard_pipelines_pending()
RETURNS TABLE (owner oid, shard regclass, shard_id bigint, definition jsonb, drop_name text)
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY
    SELECT to_regrole(d.def ->> 'owner')::oid, s.shard, s.shardid, d.def, NULL::text
    FROM pg_trigger t
    CROSS JOIN LATERAL (SELECT convert_from(substr(t.tgargs, 1, length(t.tgargs) - 1), 'UTF8')::jsonb AS def) d
    CROSS JOIN LATERAL (SELECT ds.shardid, t.tgrelid::regclass AS shard FROM pg_dist_shard ds
                        WHERE ds.logicalrelid = to_regclass(d.def ->> 'source')
                          AND to_regclass(shard_name(ds.logicalrelid, ds.shardid, false)) = t.tgrelid) s
    WHERE t.tgfoid = 'windowing._shard_pipeline()'::regprocedure AND t.tgnargs = 1
      AND NOT EXISTS (SELECT FROM windowing.pipeline p WHERE p.name = (d.def ->> 'name') || '_' || s.shardid)
    UNION ALL
    SELECT p.owner::oid, NULL, NULL, NULL, p.name
    FROM windowing.pipeline p
    WHERE p.shard_of IS NOT NULL AND p.part = 0
      AND NOT windowing._shard_carries(p.source, p.shard_of, p.shard_of_id);
END
$$;

CREATE OR REPLACE FUNCTION windowing._sync_shard_pipelines() RETURNS int
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s     record;
    d     jsonb;
    nsp   text;
    done  int := 0;
BEGIN
    -- Citus hides shards from queries on pg_class, which create_pipeline reads
    PERFORM set_config('citus.override_table_visibility', 'off', true);
    FOR s IN SELECT * FROM windowing._shard_pipelines_pending() x
             WHERE pg_has_role(current_user, x.owner, 'USAGE') LOOP
        IF s.drop_name IS NOT NULL THEN
            PERFORM windowing.drop_pipeline(s.drop_name);
        ELSE
            d := s.definition;
            nsp := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE c.oid = s.shard);
            PERFORM windowing.create_pipeline((d ->> 'name') || '_' || s.shard_id, s.shard,
                time_column => d ->> 'time_column',
                key_columns => (SELECT array_agg(k::name) FROM jsonb_array_elements_text(d -> 'key_columns') k),
                assigner => (d ->> 'assigner')::windowing.assigner,
                aggregates => d ->> 'aggregates',
                max_out_of_orderness => (d ->> 'max_out_of_orderness')::interval,
                allowed_lateness => (d ->> 'allowed_lateness')::interval,
                result_table => windowing._colocated_shard(d ->> 'result_table', s.shard_id),
                late_table => coalesce(windowing._colocated_shard(d ->> 'late_table', s.shard_id), ''),
                emit => d ->> 'emit',
                start => (d ->> 'start')::boolean,
                idle_timeout => (d ->> 'idle_timeout')::interval,
                on_error => d ->> 'on_error',
                "trigger" => d ->> 'trigger',
                watermark_column => d ->> 'watermark_column',
                evictor => d ->> 'evictor',
                fire_spread => (d ->> 'fire_spread')::interval);
            UPDATE windowing.pipeline SET shard_of = d ->> 'name', shard_of_id = (d ->> 'id')::int,
                shard_id = s.shard_id,
                shard_count = (SELECT count(*) FROM pg_dist_shard
                               WHERE logicalrelid = to_regclass(d ->> 'source'))
            WHERE pipeline.name = (d ->> 'name') || '_' || s.shard_id;
        END IF;
        done := done + 1;
    END LOOP;
    RETURN done;
END
$$;

CREATE OR REPLACE FUNCTION windowing._exchange_watermarks() RETURNS int
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    known  jsonb;
    news   text;
    moved  int;
BEGIN
    IF to_regclass('windowing.shard_progress') IS NULL
       OR NOT EXISTS (SELECT FROM windowing.pipeline p WHERE p.shard_of IS NOT NULL
                      AND p.time_column IS NOT NULL AND p.max_out_of_orderness IS NOT NULL) THEN
        RETURN 0;
    END IF;
    -- the reference table alone in the query: Citus reads it here
    SELECT coalesce(jsonb_agg(x), '[]') INTO known FROM windowing.shard_progress x;
    SELECT string_agg(format('(%L, %s, %s, %L, %L)', p.shard_of, p.shard_id,
                             coalesce(p.input_watermark::text, 'NULL'), p.last_row_at, p.created_at), ', ')
    INTO news
    FROM windowing.pipeline p
    LEFT JOIN jsonb_to_recordset(known) AS k(shard_of text, shard_id bigint, input_watermark bigint,
                                             last_row_at timestamptz)
        ON k.shard_of = p.shard_of AND k.shard_id = p.shard_id
    WHERE p.shard_of IS NOT NULL AND p.part = 0
      AND p.time_column IS NOT NULL AND p.max_out_of_orderness IS NOT NULL
      -- not once drop_pipeline() dropped it (or made it again), before
      -- this node's worker did
      AND windowing._shard_carries(p.source, p.shard_of, p.shard_of_id)
      AND (k.shard_of IS NULL OR k.input_watermark IS DISTINCT FROM p.input_watermark
           OR k.last_row_at IS DISTINCT FROM p.last_row_at);
    IF news IS NOT NULL THEN
        EXECUTE 'INSERT INTO windowing.shard_progress AS x '
                '(shard_of, shard_id, input_watermark, last_row_at, created_at) VALUES ' || news ||
                ' ON CONFLICT (shard_of, shard_id) DO UPDATE SET input_watermark = excluded.input_watermark,'
                ' last_row_at = excluded.last_row_at';
        SELECT coalesce(jsonb_agg(x), '[]') INTO known FROM windowing.shard_progress x;
    END IF;
    WITH definition AS (
        SELECT DISTINCT ON (p.shard_of) p.shard_of, p.idle_timeout, p.time_type, p.max_out_of_orderness
        FROM windowing.pipeline p WHERE p.shard_of IS NOT NULL
    ), agreed AS (
        SELECT k.shard_of,
               min(coalesce(GREATEST(k.input_watermark, windowing._idle_watermark(
                   coalesce(k.last_row_at, k.created_at), d.idle_timeout, d.time_type,
                   d.max_out_of_orderness)), -9223372036854775808)) AS w,
               count(*) AS shards
        FROM jsonb_to_recordset(known) AS k(shard_of text, shard_id bigint, input_watermark bigint,
                                            last_row_at timestamptz, created_at timestamptz)
        JOIN definition d ON d.shard_of = k.shard_of
        GROUP BY k.shard_of
    )
    UPDATE windowing.pipeline p SET shard_watermark = a.w
    FROM agreed a
    WHERE p.shard_of = a.shard_of AND a.shards = p.shard_count
      AND a.w > coalesce(p.shard_watermark, -9223372036854775808)
      AND p.time_column IS NOT NULL AND p.max_out_of_orderness IS NOT NULL;
    GET DIAGNOSTICS moved = ROW_COUNT;
    RETURN moved;
END
$$;
