# windowing: Flink-style event-time windows for PostgreSQL (PGXS build)

MODULE_big = windowing
OBJS = \
	src/aggregates.o \
	src/bgworker.o \
	src/bulk_insert.o \
	src/calendar.o \
	src/catalog.o \
	src/count_windows.o \
	src/distributed.o \
	src/emit.o \
	src/evictor.o \
	src/held_state.o \
	src/heap_rows.o \
	src/join.o \
	src/join_store.o \
	src/keys.o \
	src/launcher.o \
	src/max_by.o \
	src/operator.o \
	src/owner.o \
	src/pair_writer.o \
	src/parts.o \
	src/pipeline.o \
	src/plans.o \
	src/queue.o \
	src/queue_helper.o \
	src/queue_helper_main.o \
	src/queue_reader.o \
	src/row_arena.o \
	src/row_batch.o \
	src/session_merge.o \
	src/sessions.o \
	src/slices.o \
	src/spec.o \
	src/sql_assign.o \
	src/sql_count.o \
	src/sql_pipeline.o \
	src/sql_session.o \
	src/state.o \
	src/state_slots.o \
	src/state_store.o \
	src/tick.o \
	src/time_windows.o \
	src/trigger.o \
	src/version.o \
	src/watermark.o \
	src/window_math.o \
	src/window_table.o \
	src/windowing.o \
	src/worker.o \
	src/zone.o

EXTENSION = windowing
# the extension's scripts: the current version whole, and every upgrade step
DATA = $(wildcard sql/windowing--*.sql)
DOCS = $(wildcard doc/*.md)
PGFILEDESC = "windowing - Flink-style event-time windows"

# The pure window math builds without a server; test/unit checks it alone.
PG_CPPFLAGS = -I$(srcdir)/src

REGRESS = upgrade pipeline_queues assign calendar calendar_zones session count_window errors pipeline pipeline_reader pipeline_errors pipeline_security pipeline_access pipeline_session pipeline_clock pipeline_count \
	pipeline_sliced pipeline_bad_input pipeline_ddl pipeline_state_log pipeline_results \
	pipeline_transactions pipeline_budget pipeline_between psql_catalog iso_weeks pipeline_stats pipeline_alter timestamp_local pipeline_on_error pipeline_existing pipeline_trigger \
	pipeline_aggregates max_by pipeline_derived pipeline_rebuild pipeline_purging pipeline_stagger \
	pipeline_trigger_clock pipeline_watermark_column pipeline_trigger_delta pipeline_downstream \
	pipeline_evictor pipeline_fire_spread \
	doc_tour doc_functions doc_pipelines doc_operations pipeline_join pipeline_window_join \
	pipeline_null_keys pipeline_many_leave pipeline_parallel pipeline_state_idle \
	pipeline_join_shuffled pipeline_state_compact pipeline_state_places \
	pipeline_join_memory pipeline_join_output pipeline_state_memory \
	pipeline_state_read_ahead pipeline_equivalence pipeline_tick_ends pipeline_state_rows \
	pipeline_row_batch
REGRESS_OPTS = --temp-instance=tmp_check_regress --temp-config=$(srcdir)/test/windowing.conf \
	--load-extension=windowing

ISOLATION = pipeline_notify concurrent_sessions queue_order reowned_step state_held join_order progress_row
ISOLATION_OPTS = --inputdir=test --temp-instance=tmp_check_iso \
	--temp-config=$(srcdir)/test/windowing.conf --load-extension=windowing

TAP_TESTS = 1
PROVE_TESTS = test/t/*.pl

EXTRA_CLEAN = tmp_check tmp_check_regress tmp_check_iso output_iso results regression.diffs \
	regression.out test/unit/window_math_test

PG_CONFIG ?= pg_config

# A build without the server headers would stop at the first #include with
# a compiler error; say instead which package is missing.  pg_config and
# pgxs.mk come with the client package, so only postgres.h proves the
# headers are there.
ifeq ($(filter clean distclean,$(MAKECMDGOALS)),)
PG_INCLUDEDIR_SERVER := $(shell $(PG_CONFIG) --includedir-server 2>/dev/null)
ifeq ($(PG_INCLUDEDIR_SERVER),)
$(error cannot run "$(PG_CONFIG)": install postgresql-server-dev-15, or set PG_CONFIG to PostgreSQL 15's pg_config)
endif
ifeq ($(wildcard $(PG_INCLUDEDIR_SERVER)/postgres.h),)
$(error PostgreSQL server headers not found in $(PG_INCLUDEDIR_SERVER): install postgresql-server-dev-15)
endif
endif

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# The code uses PostgreSQL 15's internals (see src/compat.h); other major
# versions are neither built nor tested.
ifneq ($(MAJORVERSION),15)
$(error windowing builds against PostgreSQL 15 only, and $(PG_CONFIG) is PostgreSQL $(MAJORVERSION))
endif

# The library refuses a database whose extension is at another version
# than its own, so src/version.h and windowing.control move together.
LIBRARY_VERSION := $(shell sed -n 's/^\#define WINDOWING_VERSION "\(.*\)"$$/\1/p' $(srcdir)/src/version.h)
CONTROL_VERSION := $(shell sed -n "s/^default_version = '\(.*\)'$$/\1/p" $(srcdir)/windowing.control)
ifeq ($(filter clean distclean,$(MAKECMDGOALS)),)
ifneq ($(LIBRARY_VERSION),$(CONTROL_VERSION))
$(error src/version.h says version $(LIBRARY_VERSION) but windowing.control says $(CONTROL_VERSION))
endif
endif

# PGXS tracks no header dependencies: rebuild everything when a header
# changes, so that no object keeps an old struct layout.
$(OBJS): $(wildcard $(srcdir)/src/*.h)

# Unit tests of the pure C window math: no server involved.
test/unit/window_math_test: test/unit/window_math_test.c src/window_math.c src/calendar.c src/session_merge.c
	$(CC) $(CFLAGS) -Isrc -o $@ $^

.PHONY: unitcheck
unitcheck: test/unit/window_math_test
	test/unit/window_math_test
