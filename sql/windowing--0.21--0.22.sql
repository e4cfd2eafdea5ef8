-- windowing 0.21 -> 0.22

/* ---- drop_pipeline() of a distributed pipeline deletes its shards' watermarks last ---- */

-- Deleting them locks windowing.shard_progress on every node, where the
-- nodes' workers write theirs; done before the trigger was dropped, a
-- worker waiting for that lock while the drop waited for a shard looked
-- to Citus like a distributed deadlock, and the drop was cancelled.
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
    PERFORM windowing._shard_progress_reset(pipeline_name);
END
$$;
