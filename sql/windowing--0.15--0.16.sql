-- windowing 0.15 -> 0.16

/* ---- Pipelines over distributed queues (Citus) ---------------------------- */

-- the pipeline of a shard of a distributed queue: the distributed
-- pipeline it was made for, and the watermarks its shards exchange (see
-- windowing--0.16.sql)
ALTER TABLE windowing.pipeline
    ADD COLUMN shard_of text,
    ADD COLUMN input_watermark bigint,
    ADD COLUMN shard_watermark bigint,
    ADD COLUMN shard_count int;
GRANT UPDATE (shard_of, input_watermark, shard_count) ON windowing.pipeline TO PUBLIC;

-- A queue distributed by Citus keeps its rows in shards on the worker
-- nodes.  Citus would evaluate a column default on the coordinator, so its
-- rows get windowing_xid and windowing_seq from a row trigger that runs
-- where the shard is: the node's own transaction id, then a number from
-- the node's own sequence (distributed.c).
CREATE SEQUENCE windowing.arrival;
-- dumped, so that a restored node numbers new rows after the old ones
SELECT pg_catalog.pg_extension_config_dump('windowing.arrival', '');
GRANT SELECT ON SEQUENCE windowing.arrival TO PUBLIC;

CREATE FUNCTION windowing._stamp_arrival() RETURNS trigger
AS 'MODULE_PATHNAME', 'windowing_stamp_arrival' LANGUAGE C;

-- The statement trigger that carries a distributed pipeline's definition
-- to every shard of its queue (Citus creates a table's triggers on its
-- shards, in the transaction that creates them): the node that holds a
-- shard makes the shard's pipeline from it.  It does nothing when it fires.
CREATE FUNCTION windowing._shard_pipeline() RETURNS trigger
AS 'MODULE_PATHNAME', 'windowing_shard_pipeline' LANGUAGE C;

-- A late row of a distributed pipeline goes to the late table's shard on
-- the node that read it: the table's distribution column is filled from
-- the row's own value of it.
CREATE FUNCTION windowing._late_key() RETURNS trigger
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN jsonb_populate_record(NEW, jsonb_build_object(TG_ARGV[0], NEW.row_data -> TG_ARGV[0]));
END
$$;

-- Pipelines over distributed queues, on the coordinator.  Each shard of
-- the queue is read by a pipeline of its own on the node that holds it,
-- "<name>_<shard id>", made by that node's worker from the definition the
-- queue's trigger windowing_pipeline_<id> carries.
CREATE TABLE windowing.distributed_pipeline (
    id           int PRIMARY KEY DEFAULT nextval('windowing.pipeline_id_seq'),
    name         text NOT NULL UNIQUE,
    owner        regrole NOT NULL,
    source       regclass NOT NULL,
    result_table regclass NOT NULL,
    late_table   regclass,
    definition   jsonb NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
SELECT pg_catalog.pg_extension_config_dump('windowing.distributed_pipeline', '');
ALTER TABLE windowing.distributed_pipeline ENABLE ROW LEVEL SECURITY;
CREATE POLICY owner_only ON windowing.distributed_pipeline
    USING (pg_catalog.pg_has_role(owner, 'USAGE'))
    WITH CHECK (pg_catalog.pg_has_role(owner, 'USAGE'));
GRANT SELECT, INSERT, DELETE ON windowing.distributed_pipeline TO PUBLIC;
COMMENT ON TABLE windowing.distributed_pipeline IS
    'pipelines over distributed (Citus) queues, on the coordinator: each shard''s pipeline runs on its node';

-- Every pipeline over a distributed table, whoever asks (row security
-- shows a role only its own): what refuses Citus's shard moves names them.
CREATE FUNCTION windowing._distributed_pipeline_names() RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
SELECT string_agg(format('"%s" (%s)', d.name, d.source::text), ', ' ORDER BY d.name)
FROM windowing.distributed_pipeline d
$$;

-- The column a hash-distributed Citus table is distributed by, else NULL.
CREATE FUNCTION windowing._distribution_column(source regclass) RETURNS name
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    col name;
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
        EXECUTE 'SELECT pg_catalog.column_to_column_name(logicalrelid, partkey) FROM pg_catalog.pg_dist_partition
                 WHERE logicalrelid = $1 AND partmethod = ''h'''
            INTO col USING source;
    END IF;
    RETURN col;
END
$$;

-- _make_queue() of a distributed table: the columns without defaults,
-- stamped on the nodes (rows already there too), the index on the arrival
-- number, the wake trigger that holds the retention.
CREATE FUNCTION windowing._make_distributed_queue(source regclass, retention text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unsafe text := current_setting('citus.enable_unsafe_triggers');
BEGIN
    IF windowing._column_type(source, 'windowing_seq') IS NULL THEN
        EXECUTE format('ALTER TABLE %s ADD COLUMN windowing_xid xid8, ADD COLUMN windowing_seq bigint', source);
        EXECUTE format('CREATE INDEX ON %s (windowing_seq)', source);
    ELSIF NOT EXISTS (SELECT FROM pg_trigger WHERE tgrelid = source AND tgname = 'windowing_stamp') THEN
        RAISE EXCEPTION 'column "windowing_seq" of table % is not an arrival number', source
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'A distributed queue numbers its rows on the nodes, through its trigger windowing_stamp.',
                  HINT = 'Rename the column.';
    END IF;
    -- Citus runs a distributed table's triggers on its shards when told so
    PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
    EXECUTE format('CREATE OR REPLACE TRIGGER windowing_stamp BEFORE INSERT OR UPDATE OF windowing_seq ON %s '
                   'FOR EACH ROW EXECUTE FUNCTION windowing._stamp_arrival()', source);
    EXECUTE format('UPDATE %s SET windowing_seq = NULL WHERE windowing_seq IS NULL', source);
    EXECUTE format('CREATE OR REPLACE TRIGGER windowing_wake AFTER INSERT ON %s '
                   'FOR EACH STATEMENT EXECUTE FUNCTION windowing._queue_rows_added(%L)',
                   source, retention);
    PERFORM set_config('citus.enable_unsafe_triggers', unsafe, true);
END
$$;

-- The result and late tables of a pipeline over a distributed queue:
-- distributed by the same column and co-located with the queue, so that a
-- node writes a shard's results next to the shard.
CREATE FUNCTION windowing._distribute_outputs(source regclass, dist_col name, res regclass, late regclass)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    unsafe text := current_setting('citus.enable_unsafe_triggers');
    t      regclass;
BEGIN
    FOREACH t IN ARRAY ARRAY[res, late] LOOP
        CONTINUE WHEN t IS NULL;
        IF t = late AND windowing._column_type(late, dist_col) IS NULL THEN
            EXECUTE format('ALTER TABLE %s ADD COLUMN %I %s', late, dist_col,
                           windowing._column_type(source, dist_col));
        END IF;
        IF windowing._distribution_column(t) IS NULL THEN
            EXECUTE 'SELECT pg_catalog.create_distributed_table($1, $2, colocate_with => $3::text)'
                USING t, dist_col, source;
        END IF;
        IF windowing._distribution_column(t) <> dist_col OR NOT EXISTS (
               SELECT FROM pg_dist_partition a, pg_dist_partition b
               WHERE a.logicalrelid = t AND b.logicalrelid = source AND a.colocationid = b.colocationid) THEN
            RAISE EXCEPTION 'table % is not distributed as its queue % is', t, source
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      DETAIL = format('A shard''s results are written on the node that holds the shard: the table must be distributed by column "%s", co-located with the queue.', dist_col);
        END IF;
    END LOOP;
    IF late IS NOT NULL THEN
        PERFORM set_config('citus.enable_unsafe_triggers', 'on', true);
        EXECUTE format('CREATE OR REPLACE TRIGGER windowing_late_key BEFORE INSERT ON %s '
                       'FOR EACH ROW EXECUTE FUNCTION windowing._late_key(%L)', late, dist_col);
        PERFORM set_config('citus.enable_unsafe_triggers', unsafe, true);
    END IF;
END
$$;

-- What a pipeline over a distributed queue cannot be.
CREATE FUNCTION windowing._check_distributed(source regclass, dist_col name, key_columns name[],
                                             parallelism int, watermark_from text)
RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT dist_col = ANY (key_columns) THEN
        RAISE EXCEPTION 'the key columns of a pipeline over distributed table % must include its distribution column "%"',
                        source, dist_col
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Each shard is read on the node that holds it, so all the rows of a key must be in one shard.',
                  HINT = format('Add "%s" to key_columns.', dist_col);
    END IF;
    IF parallelism <> 1 OR watermark_from IS NOT NULL THEN
        RAISE EXCEPTION 'a pipeline over distributed table % runs as a pipeline per shard', source
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'It takes neither parallelism nor watermark_from.';
    END IF;
END
$$;

-- create_pipeline over a distributed queue, once its tables are made: the
-- pipeline is recorded here and its definition put on the queue's shards.
CREATE FUNCTION windowing._create_distributed_pipeline(name text, source regclass, res regclass,
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

-- On a node: the pipelines its shards should have and do not, and those
-- it has for a distributed pipeline that is gone (drop_name), with their
-- owners.  A shard is the node's if the trigger that carries the
-- definition is on it: it came with the shard.
CREATE FUNCTION windowing._shard_pipelines_pending()
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
      AND NOT EXISTS (SELECT FROM pg_trigger t
                      WHERE t.tgrelid = p.source AND t.tgfoid = 'windowing._shard_pipeline()'::regprocedure
                        AND t.tgnargs = 1
                        AND convert_from(substr(t.tgargs, 1, length(t.tgargs) - 1), 'UTF8')::jsonb ->> 'name'
                            = p.shard_of);
END
$$;

-- Makes and drops, as the current user, the pipelines of _shard_pipelines_pending()
-- that user owns: run by the node's worker as each owner.
CREATE FUNCTION windowing._sync_shard_pipelines() RETURNS int
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
            UPDATE windowing.pipeline SET shard_of = d ->> 'name',
                shard_count = (SELECT count(*) FROM pg_dist_shard
                               WHERE logicalrelid = to_regclass(d ->> 'source'))
            WHERE pipeline.name = (d ->> 'name') || '_' || s.shard_id;
        END IF;
        done := done + 1;
    END LOOP;
    RETURN done;
END
$$;

-- The watermark of a shard's pipeline whose input has been idle for its
-- idle_timeout: the clock, as pipeline_idle_watermark() has it; else NULL.
CREATE FUNCTION windowing._idle_watermark(last_row_at timestamptz, idle_timeout interval,
                                          time_type regtype, max_out_of_orderness interval)
RETURNS bigint
AS 'MODULE_PATHNAME', 'windowing_idle_watermark' LANGUAGE C STABLE;

-- On a node: moves the watermark of each of its shards' pipelines on
-- event time to the least input watermark of all the shards of its
-- distributed pipeline, as Flink's operators take the least watermark of
-- the partitions they read.  A shard's input watermark is what its rows
-- make (max event time - max_out_of_orderness), or the clock once it has
-- been idle for the pipeline's idle_timeout (an idle partition, which
-- then holds none back).  The shards are read from every node; until
-- every shard's pipeline is there and has a watermark, none moves.  Run
-- by the node's worker; returns how many pipelines' watermarks moved.
CREATE FUNCTION windowing._exchange_watermarks() RETURNS int
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    moved int;
BEGIN
    IF NOT EXISTS (SELECT FROM windowing.pipeline p WHERE p.shard_of IS NOT NULL
                   AND p.time_column IS NOT NULL AND p.max_out_of_orderness IS NOT NULL) THEN
        RETURN 0;
    END IF;
    WITH answer AS (
        SELECT n.nodename || ':' || n.nodeport AS node, r.success, r.result
        FROM run_command_on_all_nodes(
            $q$SELECT COALESCE(pg_catalog.json_agg(x), '[]') FROM (
                 SELECT p.shard_of,
                        GREATEST(p.input_watermark, windowing._idle_watermark(
                            COALESCE(p.last_row_at, p.created_at), p.idle_timeout, p.time_type,
                            p.max_out_of_orderness)) AS w
                 FROM windowing.pipeline p WHERE p.shard_of IS NOT NULL) x$q$) r
        JOIN pg_dist_node n ON n.nodeid = r.nodeid
    ), shard AS (
        SELECT s.shard_of, s.w FROM answer a
        CROSS JOIN LATERAL json_to_recordset(windowing._node_answer(a.node, a.success, a.result))
            AS s(shard_of text, w bigint)
    ), agreed AS (
        SELECT s.shard_of, min(coalesce(s.w, -9223372036854775808)) AS w, count(*) AS shards
        FROM shard s GROUP BY s.shard_of
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

-- The name of the shard of distributed table "tbl" co-located with shard
-- "shard_id" (of the queue), in the schema of both.
CREATE FUNCTION windowing._colocated_shard(tbl text, shard_id bigint) RETURNS name
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    found bigint;
BEGIN
    IF tbl IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT o.shardid INTO found FROM pg_dist_shard q JOIN pg_dist_shard o
        ON o.logicalrelid = tbl::regclass AND o.shardminvalue = q.shardminvalue
    WHERE q.shardid = shard_id;
    RETURN (parse_ident(shard_name(tbl::regclass, found, false)))[2];
END
$$;

CREATE OR REPLACE FUNCTION windowing._queue_retention(source regclass) RETURNS text
LANGUAGE sql STABLE SET search_path = pg_catalog, pg_temp
AS $$
SELECT pg_catalog.convert_from(pg_catalog.substr(t.tgargs, 1, pg_catalog.length(t.tgargs) OPERATOR(pg_catalog.-) 1), 'UTF8')
FROM pg_catalog.pg_trigger t
WHERE t.tgrelid OPERATOR(pg_catalog.=) $1 AND t.tgname OPERATOR(pg_catalog.~) '^windowing_wake(_[0-9]+)?$'
  AND t.tgfoid OPERATOR(pg_catalog.=) 'windowing._queue_rows_added()'::pg_catalog.regprocedure
  AND t.tgnargs OPERATOR(pg_catalog.=) 1
$$;

CREATE OR REPLACE FUNCTION windowing._check_not_citus(source regclass) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    citus boolean := false;
BEGIN
    IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
        EXECUTE 'SELECT EXISTS (SELECT FROM pg_catalog.pg_dist_partition WHERE logicalrelid = $1)'
            INTO citus USING source;
    END IF;
    IF citus THEN
        RAISE EXCEPTION 'table % is a Citus table', source
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'A queue is a plain table of the server its pipelines run on, or a table distributed by hash; reference tables, Citus local tables and tables distributed by range or append are not read.',
                  HINT = 'Make a local table or a hash-distributed table the queue.';
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION windowing._make_queue(source regclass, retention text) RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    queue_owner oid := (SELECT c.relowner FROM pg_class c WHERE c.oid = source);
BEGIN
    IF retention IS NULL OR retention NOT IN ('consume', 'keep') THEN
        RAISE EXCEPTION 'retention must be ''consume'' or ''keep'''
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF windowing._distribution_column(source) IS NULL THEN
        PERFORM windowing._check_not_citus(source);
    END IF;
    IF NOT pg_has_role(current_user, queue_owner, 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of table %', source
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Only the owner of a table decides whether its rows are deleted.';
    END IF;
    IF windowing._distribution_column(source) IS NOT NULL THEN
        PERFORM windowing._make_distributed_queue(source, retention);
        RETURN;
    ELSIF windowing._column_type(source, 'windowing_seq') IS NULL THEN
        EXECUTE format('ALTER TABLE %s ADD COLUMN windowing_xid xid8 NOT NULL '
                       'DEFAULT pg_catalog.pg_current_xact_id(), ADD COLUMN windowing_seq '
                       'bigint NOT NULL GENERATED BY DEFAULT AS IDENTITY', source);
        EXECUTE format('CREATE INDEX ON %s (windowing_seq)', source);
    ELSIF pg_get_serial_sequence(source::text, 'windowing_seq') IS NULL THEN
        RAISE EXCEPTION 'column "windowing_seq" of table % is not an arrival number', source
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'A queue numbers its rows with an identity column of that name.',
                  HINT = 'Rename the column.';
    END IF;
    -- on a Citus server an INSERT ... SELECT from a distributed table has
    -- the defaults evaluated on the nodes: the trigger stamps rows here
    IF to_regclass('pg_catalog.pg_dist_partition') IS NOT NULL THEN
        EXECUTE format('CREATE OR REPLACE TRIGGER windowing_stamp BEFORE INSERT ON %s '
                       'FOR EACH ROW EXECUTE FUNCTION windowing._stamp_arrival()', source);
    END IF;
    EXECUTE format('CREATE OR REPLACE TRIGGER windowing_wake AFTER INSERT ON %s '
                   'FOR EACH STATEMENT EXECUTE FUNCTION windowing._queue_rows_added(%L)',
                   source, retention);
END
$$;

CREATE OR REPLACE FUNCTION windowing._pipeline_owner(pipeline_name text) RETURNS regrole
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp
AS $$
SELECT p.owner FROM windowing.pipeline p WHERE p.name OPERATOR(pg_catalog.=) $1
UNION ALL
SELECT d.owner FROM windowing.distributed_pipeline d WHERE d.name OPERATOR(pg_catalog.=) $1
LIMIT 1
$$;

CREATE OR REPLACE FUNCTION windowing._check_owner(pipeline_name text) RETURNS void
LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    o regrole := windowing._pipeline_owner(pipeline_name);
BEGIN
    IF o IS NULL THEN
        RAISE EXCEPTION 'pipeline "%" does not exist', pipeline_name
            USING ERRCODE = 'undefined_object';
    END IF;
    IF NOT pg_has_role(current_user, o, 'USAGE') THEN
        RAISE EXCEPTION 'must be owner of pipeline "%"', pipeline_name
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Only the owner of a pipeline or a superuser may run, change or drop it.';
    END IF;
    IF EXISTS (SELECT FROM windowing.distributed_pipeline d WHERE d.name = pipeline_name) THEN
        RAISE EXCEPTION 'pipeline "%" runs on the shards of a distributed table', pipeline_name
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Each shard''s pipeline, named after the pipeline and the shard, runs on the node that holds the shard; only drop_pipeline() acts on them all.',
                  HINT = 'Act on a shard''s pipeline on its node, or drop the pipeline and create it again.';
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION windowing.create_pipeline(
    name                 text,
    source               regclass,
    time_column          name,
    key_columns          name[]   DEFAULT '{}',
    assigner             windowing.assigner DEFAULT NULL,
    aggregates           text     DEFAULT 'count(*)',
    max_out_of_orderness interval DEFAULT '0',
    allowed_lateness     interval DEFAULT '0',
    result_table         name     DEFAULT NULL,
    late_table           name     DEFAULT NULL,
    emit                 text     DEFAULT 'upsert',
    start                boolean  DEFAULT true,
    idle_timeout         interval DEFAULT NULL,
    retention            text     DEFAULT NULL,
    on_error             text     DEFAULT 'stop',
    "trigger"            text     DEFAULT NULL,
    watermark_column     name     DEFAULT NULL,
    watermark_from       text     DEFAULT NULL,
    evictor              text     DEFAULT NULL,
    fire_spread          interval DEFAULT NULL,
    parallelism          int      DEFAULT 1)
RETURNS int
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    new_id    int;
    nsp       text := (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                       WHERE c.oid = source);
    kept      text := windowing._queue_retention(source);
    ttype     text;
    wtype     text;
    res_name  text := coalesce(result_table, name || '_results');
    late_name text := coalesce(late_table, name || '_late');
    res_rel   regclass;
    late_rel  regclass;
    -- the type of the windows a late row missed
    late_win  text;
    cols      text := '';
    keys      text := '';
    -- the result table's columns, as format_type() names their types
    agg_names name[] := '{}';
    agg_types text[] := '{}';
    key_types text[] := '{}';
    res_cols  name[];
    k         name;
    a         record;
    early     boolean;
    upstream  int;
    -- a queue distributed by Citus: a pipeline per shard, on its node
    dist_col  name := windowing._distribution_column(source);
BEGIN
    IF name IS NULL OR name = '' THEN
        RAISE EXCEPTION 'pipeline name must not be empty' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF source IS NULL OR key_columns IS NULL OR aggregates IS NULL
       OR allowed_lateness IS NULL OR emit IS NULL OR start IS NULL THEN
        RAISE EXCEPTION 'only time_column, max_out_of_orderness, result_table, late_table and idle_timeout may be NULL'
            USING ERRCODE = 'null_value_not_allowed';
    END IF;
    PERFORM windowing._check_parallelism(parallelism);
    IF assigner IS NULL THEN
        RAISE EXCEPTION 'a pipeline needs an assigner'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass assigner => windowing.tumbling(''1 minute''), windowing.hopping(...) or windowing.cumulating(...).';
    END IF;
    IF emit NOT IN ('upsert', 'append') THEN
        RAISE EXCEPTION 'emit must be ''upsert'' or ''append''' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF on_error IS NULL OR on_error NOT IN ('stop', 'route') THEN
        RAISE EXCEPTION 'on_error must be ''stop'' or ''route''' USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF on_error = 'route' AND late_table = '' THEN
        RAISE EXCEPTION 'a pipeline with on_error ''route'' needs a late table'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Rows whose aggregate inputs fail are routed to the late table.',
                  HINT = 'Leave late_table unset, or name a table for it.';
    END IF;
    IF windowing._pipeline_owner(name) IS NOT NULL THEN
        RAISE EXCEPTION 'pipeline "%" already exists', name USING ERRCODE = 'duplicate_object';
    END IF;
    -- PostgreSQL would cut the tables' names to fit, and nobody would find them
    IF (result_table IS NULL AND (name || '_results')::name::text <> name || '_results')
       OR (late_table IS NULL AND (name || '_late')::name::text <> name || '_late') THEN
        RAISE EXCEPTION 'pipeline name "%" is too long to name its tables', name
            USING ERRCODE = 'name_too_long',
                  DETAIL = format('"%s_results" and "%s_late" must fit in %s bytes.', name, name,
                                  current_setting('max_identifier_length')),
                  HINT = 'Pass result_table and late_table, or use a shorter name.';
    END IF;
    IF (SELECT relkind FROM pg_class WHERE oid = source) NOT IN ('r', 'p') THEN
        RAISE EXCEPTION '"%" is not a table', source USING ERRCODE = 'wrong_object_type';
    END IF;
    IF NOT has_table_privilege(source, 'SELECT') THEN
        RAISE EXCEPTION 'permission denied for table %', source
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'A pipeline reads its source with the rights of its owner.';
    END IF;
    IF dist_col IS NOT NULL THEN
        PERFORM windowing._check_distributed(source, dist_col, key_columns, parallelism, watermark_from);
    END IF;
    PERFORM windowing._check_duration(max_out_of_orderness, 'max_out_of_orderness');
    PERFORM windowing._check_duration(allowed_lateness, 'allowed_lateness');
    PERFORM windowing._check_duration(idle_timeout, 'idle_timeout');
    IF emit = 'upsert' THEN
        PERFORM windowing._check_upsert_keys(source, key_columns);
    END IF;
    FOR a IN SELECT * FROM windowing._describe(source, time_column, key_columns, assigner, aggregates) LOOP
        cols := cols || format('%I %s, ', a.column_name, a.column_type);
        agg_names := agg_names || a.column_name::name;
        agg_types := agg_types || format_type(a.column_type::regtype, -1);
    END LOOP;
    -- no time column: processing time, the clock of the step reading a row
    ttype := coalesce(windowing._column_type(source, time_column), 'timestamp with time zone');
    -- a trigger that fires early makes results say which pane each row is
    early := windowing._check_trigger("trigger", assigner, ttype::regtype);
    PERFORM windowing._check_trigger_input(source, "trigger", assigner, ttype::regtype);
    PERFORM windowing._check_evictor(evictor, source, time_column, assigner, ttype::regtype, aggregates);
    PERFORM windowing._check_fire_spread(fire_spread, assigner, "trigger");
    -- count windows are numbered by rows
    wtype := CASE WHEN (assigner).kind = 'counting' THEN 'bigint' ELSE ttype END;
    upstream := windowing._check_watermark(source, time_column, ttype, assigner,
                                           watermark_column, watermark_from, max_out_of_orderness);
    late_win := CASE ttype WHEN 'bigint' THEN 'windowing.bigint_window'
                           WHEN 'timestamp without time zone' THEN 'windowing.timestamp_window'
                           ELSE 'windowing.time_window' END;
    -- the clock is an instant, and a timestamp column's zone is unknown
    IF idle_timeout IS NOT NULL AND ttype = 'timestamp without time zone' THEN
        RAISE EXCEPTION 'idle_timeout needs a timestamptz or bigint time column'
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'The watermark would follow the clock, which is no local time.';
    END IF;
    FOREACH k IN ARRAY key_columns LOOP
        keys := keys || format('%I %s, ', k, windowing._column_type(source, k));
        key_types := key_types || windowing._column_type(source, k);
    END LOOP;

    -- a table becomes a queue by its owner's explicit choice only
    IF kept IS NULL AND retention IS NULL THEN
        RAISE EXCEPTION 'table % is not a queue', source
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'A queue''s rows are either consumed (deleted once every pipeline on it has read them) or kept.',
                  HINT = 'Pass retention => ''keep'' to leave its rows alone or retention => ''consume'' to have them deleted once read, or create a queue with windowing.create_queue().';
    ELSIF kept IS NULL THEN
        PERFORM windowing._make_queue(source, retention);
        IF retention = 'consume' THEN
            RAISE NOTICE 'rows of table % will be deleted once every pipeline on it has read them', source;
        END IF;
    ELSIF retention IS DISTINCT FROM kept AND retention IS NOT NULL THEN
        RAISE EXCEPTION 'queue % already has retention ''%''', source, kept
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Change it with windowing.alter_queue().';
    END IF;

    -- a table named by result_table or late_table may exist already
    IF result_table IS NOT NULL THEN
        res_rel := to_regclass(format('%I.%I', nsp, result_table));
    END IF;
    IF late_table <> '' THEN
        late_rel := to_regclass(format('%I.%I', nsp, late_table));
    END IF;
    IF res_rel IS NULL THEN
        EXECUTE format('CREATE TABLE %I.%I (%s window_start %s NOT NULL, window_end %s NOT NULL, '
                       'window_time %s NOT NULL, %s fire_count int NOT NULL, is_final boolean NOT NULL, '
                       '%sfired_at timestamptz NOT NULL%s)%s',
                       nsp, res_name, keys, wtype, wtype, wtype, cols,
                       CASE WHEN early THEN 'pane text NOT NULL, ' ELSE '' END,
                       -- in the order windows fire, so the index grows at its right edge
                       CASE WHEN emit = 'upsert' THEN
                           format(', UNIQUE NULLS NOT DISTINCT (window_end, %s window_start)',
                                  (SELECT string_agg(format('%I, ', c), '') FROM unnest(key_columns) c))
                       ELSE '' END,
                       -- re-fires update rows in place: room on the page for the
                       -- new version makes the update HOT, pruned without vacuum
                       CASE WHEN emit = 'upsert' AND (allowed_lateness <> '0' OR early) THEN
                           ' WITH (fillfactor = 50)'
                       ELSE '' END);
    ELSE
        res_cols := key_columns || '{window_start, window_end, window_time}'::name[] || agg_names
                    || CASE WHEN early THEN '{fire_count, is_final, pane, fired_at}'
                            ELSE '{fire_count, is_final, fired_at}' END::name[];
        PERFORM windowing._check_existing_table(res_rel, name, 'result table', res_cols,
            key_types || array_fill(format_type(wtype::regtype, -1), ARRAY[3]) || agg_types
            || CASE WHEN early THEN '{integer, boolean, text, timestamp with time zone}'
                    ELSE '{integer, boolean, timestamp with time zone}' END::text[], res_cols);
        IF emit = 'upsert' THEN
            PERFORM windowing._check_upsert_index(res_rel, key_columns);
        END IF;
    END IF;
    IF late_name <> '' AND late_rel IS NULL THEN
        EXECUTE format('CREATE TABLE %I.%I (routed_at timestamptz NOT NULL DEFAULT pg_catalog.now(), '
                       'event_time %s, watermark %s, reason text NOT NULL, missed_windows %s[], '
                       'row_data jsonb NOT NULL, error jsonb)',
                       nsp, late_name, ttype, ttype, late_win);
    ELSIF late_name <> '' THEN
        -- a step leaves routed_at to its default
        PERFORM windowing._check_existing_table(late_rel, name, 'late table',
            '{routed_at, event_time, watermark, reason, missed_windows, row_data, error}',
            ARRAY['timestamp with time zone', format_type(ttype::regtype, -1), format_type(ttype::regtype, -1),
                  'text', format_type((late_win || '[]')::regtype, -1), 'jsonb', 'jsonb'],
            '{event_time, watermark, reason, missed_windows, row_data, error}');
    END IF;

    IF dist_col IS NOT NULL THEN
        res_rel := format('%I.%I', nsp, res_name)::regclass;
        late_rel := CASE WHEN late_name <> '' THEN format('%I.%I', nsp, late_name)::regclass END;
        PERFORM windowing._distribute_outputs(source, dist_col, res_rel, late_rel);
        RETURN windowing._create_distributed_pipeline(name, source, res_rel, late_rel, jsonb_build_object(
            'time_column', time_column, 'key_columns', key_columns, 'assigner', assigner::text,
            'aggregates', aggregates, 'max_out_of_orderness', max_out_of_orderness,
            'allowed_lateness', allowed_lateness, 'emit', emit, 'start', start,
            'idle_timeout', idle_timeout, 'on_error', on_error, 'trigger', "trigger",
            'watermark_column', watermark_column, 'evictor', evictor, 'fire_spread', fire_spread));
    END IF;
    INSERT INTO windowing.pipeline (name, owner, source, time_column, time_type, key_columns,
        assigner, aggregates, max_out_of_orderness, allowed_lateness, result_table, late_table,
        emit, state, idle_timeout, on_error, "trigger", watermark_column, watermark_from, evictor,
        fire_spread, parallelism)
    VALUES (name, current_user::regrole, source, time_column, ttype::regtype, key_columns,
        assigner, aggregates,
        -- a watermark taken from elsewhere comes without a delay
        CASE WHEN watermark_column IS NULL AND upstream IS NULL THEN max_out_of_orderness END,
        allowed_lateness,
        format('%I.%I', nsp, res_name)::regclass,
        CASE WHEN late_name <> '' THEN format('%I.%I', nsp, late_name)::regclass END,
        emit, CASE WHEN start THEN 'running' ELSE 'paused' END, idle_timeout, on_error,
        -- 'event time' is the default, stored as NULL
        CASE WHEN early OR windowing._trigger_purges("trigger", assigner, ttype::regtype)
             THEN "trigger" END, watermark_column, upstream, evictor, fire_spread, parallelism)
    RETURNING id INTO new_id;
    PERFORM windowing._add_parts(new_id, parallelism);
    IF start THEN
        PERFORM windowing._wake_workers();
    END IF;
    RETURN new_id;
END
$$;

CREATE OR REPLACE FUNCTION windowing.drop_pipeline(name text, drop_tables boolean DEFAULT false)
RETURNS void
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    p  windowing.pipeline;
    st regclass;
BEGIN
    IF EXISTS (SELECT FROM windowing.distributed_pipeline d WHERE d.name = drop_pipeline.name) THEN
        PERFORM windowing._drop_distributed_pipeline(name, drop_tables);
        RETURN;
    END IF;
    PERFORM windowing._check_owner(name);
    PERFORM windowing._lock_pipeline(name);
    -- a join's rows kept for matching are its state, not its results
    FOR st IN SELECT i.state_table FROM windowing.join_input i JOIN windowing.pipeline q ON q.id = i.pipeline_id
              WHERE q.name = drop_pipeline.name AND EXISTS (SELECT FROM pg_class WHERE oid = i.state_table) LOOP
        EXECUTE format('DROP TABLE %s', st);
    END LOOP;
    FOR p IN DELETE FROM windowing.pipeline WHERE pipeline.name = drop_pipeline.name RETURNING * LOOP
        PERFORM windowing._forget_dropped_state(p.id);
    END LOOP;
    IF drop_tables AND EXISTS (SELECT FROM pg_class WHERE oid = p.result_table) THEN
        EXECUTE format('DROP TABLE %s', p.result_table);
    END IF;
    IF drop_tables AND EXISTS (SELECT FROM pg_class WHERE oid = p.late_table) THEN
        EXECUTE format('DROP TABLE %s', p.late_table);
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION windowing._check_join_input(source regclass, time_column name, key_columns name[],
                                            retention text, side text) RETURNS text
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    kept  text := windowing._queue_retention(source);
    ttype text;
    k     name;
BEGIN
    IF (SELECT relkind FROM pg_class WHERE oid = source) NOT IN ('r', 'p') THEN
        RAISE EXCEPTION '"%" is not a table', source USING ERRCODE = 'wrong_object_type';
    END IF;
    IF windowing._distribution_column(source) IS NOT NULL THEN
        RAISE EXCEPTION 'a join pipeline cannot read distributed table %', source
            USING ERRCODE = 'feature_not_supported',
                  DETAIL = 'Only aggregate pipelines run over distributed queues, a pipeline per shard.';
    END IF;
    IF NOT has_table_privilege(source, 'SELECT') THEN
        RAISE EXCEPTION 'permission denied for table %', source
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'A pipeline reads its sources with the rights of its owner.';
    END IF;
    IF time_column IS NULL THEN
        RAISE EXCEPTION 'a join pipeline needs the time column of its % input', side
            USING ERRCODE = 'null_value_not_allowed',
                  DETAIL = 'Joins match rows by event time; processing time is not supported.';
    END IF;
    ttype := windowing._column_type(source, time_column);
    IF ttype IS NULL THEN
        RAISE EXCEPTION 'column "%" of % does not exist', time_column, source
            USING ERRCODE = 'undefined_column';
    END IF;
    IF ttype NOT IN ('timestamp with time zone', 'timestamp without time zone', 'bigint') THEN
        RAISE EXCEPTION 'time column "%" of % must be timestamptz, timestamp or bigint, not %',
                        time_column, source, ttype
            USING ERRCODE = 'datatype_mismatch';
    END IF;
    IF key_columns IS NULL OR cardinality(key_columns) = 0 THEN
        RAISE EXCEPTION 'a join pipeline needs key columns on its % input', side
            USING ERRCODE = 'invalid_parameter_value',
                  DETAIL = 'Rows are joined where their keys are equal.';
    END IF;
    FOREACH k IN ARRAY key_columns LOOP
        IF windowing._column_type(source, k) IS NULL THEN
            RAISE EXCEPTION 'column "%" of % does not exist', k, source
                USING ERRCODE = 'undefined_column';
        END IF;
    END LOOP;
    IF kept IS NULL AND retention IS NULL THEN
        RAISE EXCEPTION 'table % is not a queue', source
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Pass retention => ''keep'' or retention => ''consume'', or create a queue with windowing.create_queue().';
    ELSIF kept IS NULL THEN
        PERFORM windowing._make_queue(source, retention);
        IF retention = 'consume' THEN
            RAISE NOTICE 'rows of table % will be deleted once every pipeline on it has read them', source;
        END IF;
    END IF;
    RETURN ttype;
END
$$;

-- drop_pipeline() of a pipeline over a distributed queue: without the
-- trigger that carries its definition, each node's worker drops the
-- pipelines of its shards.
CREATE FUNCTION windowing._drop_distributed_pipeline(pipeline_name text, drop_tables boolean)
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

CREATE OR REPLACE VIEW windowing.queues AS
SELECT t.tgrelid::pg_catalog.regclass AS queue, windowing._queue_retention(t.tgrelid) AS retention,
       ARRAY(SELECT p.name FROM windowing.pipeline p
             WHERE (p.source OPERATOR(pg_catalog.=) t.tgrelid AND p.join_type IS NULL
                    AND p.part OPERATOR(pg_catalog.=) 0)
                OR p.id OPERATOR(pg_catalog.=) ANY (SELECT i.pipeline_id FROM windowing.join_input i
                                                    WHERE i.source OPERATOR(pg_catalog.=) t.tgrelid)
             UNION ALL
             SELECT d.name FROM windowing.distributed_pipeline d
             WHERE d.source OPERATOR(pg_catalog.=) t.tgrelid
             ORDER BY 1) AS pipelines
FROM pg_catalog.pg_trigger t
WHERE t.tgname OPERATOR(pg_catalog.~) '^windowing_wake(_[0-9]+)?$'
  AND t.tgfoid OPERATOR(pg_catalog.=) 'windowing._queue_rows_added()'::pg_catalog.regprocedure;

-- A node's answer to run_command_on_all_nodes(), or its error.
CREATE FUNCTION windowing._node_answer(node text, success boolean, answer text) RETURNS json
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT success THEN
        RAISE EXCEPTION 'could not read the pipelines of node %', node
            USING ERRCODE = 'connection_failure', DETAIL = answer;
    END IF;
    RETURN answer::json;
END
$$;

-- On the coordinator: the pipeline of each shard of each pipeline over a
-- distributed queue, read from the node that holds the shard (a query on
-- each node, each in its own transaction), and a row for the whole
-- pipeline (node and shard_pipeline NULL): its counters summed, its
-- watermark the least of its shards'.  A node that cannot be reached
-- fails the query.
CREATE FUNCTION windowing._distributed_pipeline_stats()
RETURNS TABLE (name text, node text, shard_pipeline text, state text, watermark_time timestamptz,
               watermark_ms bigint, backlog_rows bigint, rows_consumed bigint, windows_fired bigint,
               late_routed bigint, late_dropped bigint, open_windows bigint,
               last_step_at timestamptz, last_error text)
LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF NOT EXISTS (SELECT FROM windowing.distributed_pipeline) THEN
        RETURN;
    END IF;
    RETURN QUERY
    WITH answer AS (
        SELECT n.nodename || ':' || n.nodeport AS node, r.success, r.result
        FROM run_command_on_all_nodes(
            $q$SELECT COALESCE(pg_catalog.json_agg(x), '[]') FROM (
                 SELECT p.shard_of, s.name, s.state, s.watermark_time, s.watermark_ms, s.backlog_rows,
                        s.rows_consumed, s.windows_fired, s.late_routed, s.late_dropped,
                        s.open_windows, s.last_step_at, s.last_error
                 FROM windowing.pipeline_stats s JOIN windowing.pipeline p ON p.name = s.name
                 WHERE p.shard_of IS NOT NULL) x$q$) r
        JOIN pg_dist_node n ON n.nodeid = r.nodeid
    ), shard AS (
        SELECT d.name AS pipeline, a.node, s.*
        FROM answer a
        CROSS JOIN LATERAL json_to_recordset(windowing._node_answer(a.node, a.success, a.result))
            AS s(shard_of text, name text, state text, watermark_time timestamptz, watermark_ms bigint,
                 backlog_rows bigint, rows_consumed bigint, windows_fired bigint, late_routed bigint,
                 late_dropped bigint, open_windows bigint, last_step_at timestamptz, last_error text)
        JOIN windowing.distributed_pipeline d ON d.name = s.shard_of
    )
    SELECT s.pipeline, s.node, s.name, s.state, s.watermark_time, s.watermark_ms, s.backlog_rows,
           s.rows_consumed, s.windows_fired, s.late_routed, s.late_dropped, s.open_windows,
           s.last_step_at, s.last_error
    FROM shard s
    UNION ALL
    SELECT s.pipeline, NULL, NULL, string_agg(DISTINCT s.state, ', '), min(s.watermark_time),
           min(s.watermark_ms), sum(s.backlog_rows)::bigint, sum(s.rows_consumed)::bigint,
           sum(s.windows_fired)::bigint, sum(s.late_routed)::bigint, sum(s.late_dropped)::bigint,
           sum(s.open_windows)::bigint, max(s.last_step_at), NULL
    FROM shard s GROUP BY s.pipeline
    ORDER BY 1, 2 NULLS FIRST, 3;
END
$$;

CREATE VIEW windowing.distributed_pipeline_stats AS
SELECT * FROM windowing._distributed_pipeline_stats();
GRANT SELECT ON windowing.distributed_pipeline_stats TO PUBLIC;
COMMENT ON VIEW windowing.distributed_pipeline_stats IS
    'pipelines over distributed (Citus) queues: each shard''s pipeline as its node reports it, and the whole pipeline';
