#!/usr/bin/env bash
# Runs the tests against a build of the extension checked for undefined
# behaviour, or against a server under valgrind memcheck.
#
#   test/memcheck.sh ubsan      # unit, pg_regress, isolation and TAP tests
#   VALGRIND_SUPP=/path/to/postgresql-15/src/tools/valgrind.supp \
#       test/memcheck.sh valgrind   # pg_regress and isolation tests
#
# ubsan: the extension is rebuilt with -fsanitize=undefined and
# -fno-sanitize-recover=all, so the first undefined behaviour aborts the
# backend and fails its test; the report (file, line, stack) is in the
# server log of that test.  PostgreSQL itself needs no rebuild.  (ASan, by
# LD_PRELOAD into a server not built for it, hangs in initdb.)
#
# valgrind: one server, with the library preloaded and the settings of
# test/windowing.conf, runs under memcheck with PostgreSQL's suppressions
# file (src/tools/valgrind.supp of the PostgreSQL 15 source, from
# "apt-get source postgresql-15"); the suites run against it.  The
# packaged server is not built with USE_VALGRIND, so memcheck sees
# malloc'd blocks, not single palloc chunks: it finds reads of
# uninitialized memory, and accesses outside any block.  Only reports with
# a frame in the extension fail the run (see report_valgrind).
#
# Both rebuild the extension as it ships when they end.
source "$(dirname "$0")/lib.sh"

mode=${1:-}
case "$mode" in
	ubsan | valgrind) ;;
	*)
		say "usage: test/memcheck.sh ubsan|valgrind"
		exit 2
		;;
esac

rebuild() {
	make -C "$TOP" -s clean
	make -C "$TOP" -s with_llvm=no "$@" >/dev/null
	install_extension "$@"
}
trap 'rebuild' EXIT

# The tests run from a copy of the tree owned by the server's account.
copy_tree() {
	local dir
	dir=$(mktemp -d)
	tar -C "$TOP" --exclude=.git --exclude=results --exclude=tmp_check \
		--exclude='tmp_check_*' --exclude=output_iso -cf - . | tar -C "$dir" -xf -
	[ "$(id -u)" -ne 0 ] || chown -R postgres: "$dir"
	echo "$dir"
}

run_ubsan() {
	local flags="-fsanitize=undefined -fno-sanitize-recover=all"
	local dir
	rebuild PG_CFLAGS="$flags" PG_LDFLAGS="$flags"
	dir=$(copy_tree)
	say "tests with UBSan in $dir"
	as_server_user env UBSAN_OPTIONS=print_stacktrace=1 \
		make -C "$dir" -s with_llvm=no unitcheck installcheck \
		PG_CFLAGS="$flags" PG_LDFLAGS="$flags" CFLAGS_SL_MODULE="$flags"
	if grep -rl 'runtime error:' "$dir"/tmp_check*/ "$dir"/output_iso 2>/dev/null; then
		say "undefined behaviour found (see the files above)"
		return 1
	fi
	say "no undefined behaviour found"
}

run_valgrind() {
	local supp=${VALGRIND_SUPP:?set VALGRIND_SUPP to PostgreSQL\'s src/tools/valgrind.supp}
	local dir port=54399 status=0
	command -v valgrind >/dev/null || { say "apt-get install valgrind"; exit 1; }
	rebuild
	dir=$(copy_tree)
	as_server_user "$PGBIN/initdb" -D "$dir/data" -A trust -U postgres >/dev/null
	cat "$TOP/test/windowing.conf" >>"$dir/data/postgresql.conf"
	cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$dir'
port = $port
fsync = off
CONF
	say "server under valgrind in $dir"
	as_server_user valgrind --quiet --trace-children=yes --track-origins=yes \
		--read-var-info=no --leak-check=no --num-callers=30 \
		--suppressions="$supp" --suppressions="$TOP/test/valgrind.supp" \
		--error-markers=VALGRINDERROR-BEGIN,VALGRINDERROR-END \
		--log-file="$dir/valgrind.%p.log" \
		"$PGBIN/postgres" -D "$dir/data" >"$dir/server.log" 2>&1 &
	until as_server_user "$PGBIN/pg_isready" -q -h "$dir" -p $port; do sleep 1; done
	as_server_user make -C "$dir" -s with_llvm=no installcheck TAP_TESTS= \
		REGRESS_OPTS="--host=$dir --port=$port --load-extension=windowing" \
		ISOLATION_OPTS="--inputdir=test --host=$dir --port=$port --load-extension=windowing" ||
		status=$?
	as_server_user "$PGBIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true
	report_valgrind "$dir" || status=1
	return $status
}

# Fails on reports with a frame in the extension: in windowing.so, or, as
# valgrind names frames it has debugging information for, in one of the
# extension's source files.  The packaged server is stripped, so the
# suppressions that name its static functions (the padding of WAL and
# relcache init file writes) cannot match: reports wholly inside PostgreSQL
# are counted, not failed on.  test/valgrind.supp matches those by
# exported callers where they reach the extension's frames.
report_valgrind() {
	local ours theirs sources
	sources=$(cd "$TOP/src" && ls -- *.c | sed 's/\.c$//' | paste -sd '|')
	cat "$1"/valgrind.*.log | awk -v ours="$1/ours.txt" -v frame="[(](${sources})[.]c:[0-9]+[)]" '
		/VALGRINDERROR-BEGIN/ { report = ""; inside = 1 }
		inside { report = report $0 "\n" }
		/VALGRINDERROR-END/ {
			inside = 0
			if (report ~ /windowing[.]so/ || report ~ frame) { printf "%s", report >> ours; n++ } else m++
		}
		END { print n + 0, m + 0 }' | {
		read -r ours theirs
		say "memcheck: $ours reports in windowing, $theirs inside PostgreSQL itself"
		[ "$ours" -eq 0 ] || { cat "$1/ours.txt"; return 1; }
	}
}

"run_$mode"
