-- windowing 0.16 -> 0.17

/* ---- Distributed pipelines exchange watermarks through a Citus table ------ */

-- The input watermarks of the shards of distributed pipelines, a row per
-- shard, in a Citus reference table: each node writes those of its shards
-- and reads all of them from its own copy, over the connections Citus
-- keeps, instead of asking every node each time.  Made on the
-- coordinator with its first distributed pipeline (or by its worker, for
-- pipelines made before the table was), as a Citus table cannot be a
-- member of the extension; the rows of a pipeline are deleted when a
-- distributed pipeline of that name is made or dropped.
CREATE FUNCTION windowing._shard_progress_reset(pipeline_name text) RETURNS void
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF to_regclass('windowing.shard_progress') IS NULL THEN
        IF NOT EXISTS (SELECT FROM windowing.distributed_pipeline) THEN
            RETURN;
        END IF;
        CREATE TABLE windowing.shard_progress (
            shard_of        text NOT NULL,
            shard_id        bigint NOT NULL,
            input_watermark bigint,
            last_row_at     timestamptz,
            created_at      timestamptz NOT NULL,
            PRIMARY KEY (shard_of, shard_id)
        );
        COMMENT ON TABLE windowing.shard_progress IS
            'input watermarks of the shards of distributed pipelines, which their nodes exchange';
        PERFORM create_reference_table('windowing.shard_progress');
    END IF;
    IF pipeline_name IS NOT NULL THEN
        DELETE FROM windowing.shard_progress p WHERE p.shard_of = pipeline_name;
    END IF;
END
$$;

-- Whether a shard still carries the definition of distributed pipeline
-- "pipeline_name" (the trigger drop_pipeline() drops).
CREATE FUNCTION windowing._shard_carries(shard regclass, pipeline_name text) RETURNS boolean
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
AS $$
SELECT EXISTS (SELECT FROM pg_trigger t
               WHERE t.tgrelid = shard AND t.tgfoid = 'windowing._shard_pipeline()'::regprocedure
                 AND t.tgnargs = 1
                 AND convert_from(substr(t.tgargs, 1, length(t.tgargs) - 1), 'UTF8')::jsonb ->> 'name'
                     = pipeline_name)
$$;

-- On a node: the pipelines its shards should have and do not, and those
-- it has for a distributed pipeline that is gone (drop_name), with their
-- owners.  A shard is the node's if the trigger that carries the
-- definition is on it: it came with the shard.
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
      AND NOT windowing._shard_carries(p.source, p.shard_of);
END
$$;

-- On a node: moves the watermark of each of its shards' pipelines on
-- event time to the least input watermark of all the shards of its
-- distributed pipeline, as Flink's operators take the least watermark of
-- the partitions they read.  A shard's input watermark is what its rows
-- make (max event time - max_out_of_orderness), or the clock once it has
-- been idle for the pipeline's idle_timeout (an idle partition, which
-- then holds none back).  The node first writes to shard_progress what
-- its shards' pipelines show that the table does not (one write, to
-- every node, when anything moved), then reads the table; until every
-- shard's pipeline is there, none moves.  Run by the node's worker;
-- returns how many pipelines' watermarks moved.
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
    SELECT string_agg(format('(%L, %s, %s, %L, %L)', p.shard_of, s.shard_id,
                             coalesce(p.input_watermark::text, 'NULL'), p.last_row_at, p.created_at), ', ')
    INTO news
    FROM windowing.pipeline p
    CROSS JOIN LATERAL (SELECT substr(p.name, length(p.shard_of) + 2)::bigint AS shard_id) s
    LEFT JOIN jsonb_to_recordset(known) AS k(shard_of text, shard_id bigint, input_watermark bigint,
                                             last_row_at timestamptz)
        ON k.shard_of = p.shard_of AND k.shard_id = s.shard_id
    WHERE p.shard_of IS NOT NULL AND p.part = 0
      AND p.time_column IS NOT NULL AND p.max_out_of_orderness IS NOT NULL
      -- not once drop_pipeline() dropped it, before this node's worker did
      AND windowing._shard_carries(p.source, p.shard_of)
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

-- create_pipeline over a distributed queue, once its tables are made: the
-- pipeline is recorded here and its definition put on the queue's shards.
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
                   definition || jsonb_build_object('name', name, 'owner', current_user,
                                                    'source', source::text, 'result_table', res::text,
                                                    'late_table', late::text));
    PERFORM set_config('citus.enable_unsafe_triggers', unsafe, true);
    RETURN new_id;
END
$$;

-- drop_pipeline() of a pipeline over a distributed queue: without the
-- trigger that carries its definition, each node's worker drops the
-- pipelines of its shards.
CREATE OR REPLACE FUNCTION windowing._drop_distributed_pipeline(pipeline_name text, drop_tables boolean)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    d      windowing.distributed_pipeline;
    unsafe text := current_setting('citus.enable_unsafe_triggers');
BEGIN
    IF NOT pg_has_role(current_user, windowing._pipeline_owner(pipeline_name), 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of pipeline "%"', pipeline_name
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Only the owner of a pipeline or a superuser may run, change or drop it.';
    END IF;
    DELETE FROM windowing.distributed_pipeline p WHERE p.name = pipeline_name RETURNING * INTO d;
    PERFORM windowing._shard_progress_reset(pipeline_name);
    PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    IF EXISTS (SELECT FROM pg_class WHERE oid = d.source) THEN
        EXECUTE format('DROP TRIGGER IF EXISTS %I ON %s', 'windowing_pipeline_' || d.id, d.source);
    END IF;
    PERFORM set_config('citus.enable_unsafe_triggers', unsafe, true);
    IF drop_tables AND EXISTS (SELECT FROM pg_class WHERE oid = d.result_table) THEN
        EXECUTE format('DROP TABLE %s', d.result_table);
    END IF;
    IF drop_tables AND EXISTS (SELECT FROM pg_class WHERE oid = d.late_table) THEN
        EXECUTE format('DROP TABLE %s', d.late_table);
    END IF;
END
$$;
