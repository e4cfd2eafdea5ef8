#!/usr/bin/env bash
# Runs every test of windowing: the set-up's own test, the check that every
# SQL example of the docs is run by a test, the unit tests of the pure
# window math, pg_regress (sql/, expected/), the isolation specs
# (test/specs/) and the TAP tests (test/t/), each on throwaway servers
# started by the test drivers themselves.  Installs missing Debian packages
# when it can, pg_cron (postgresql-15-cron) too, for the test of the pg_cron
# recipe, which is skipped without it.
#
#   test/run.sh
#
# Run as root, the tests run from a copy of the tree owned by "postgres",
# because PostgreSQL refuses to run as root.
source "$(dirname "$0")/lib.sh"

need_packages
want_packages postgresql-15-cron
"$TOP/test/setup_test.sh"
say "the docs' SQL examples"
"$TOP/test/doc_examples.sh"
build_and_install

dir=$TOP
if [ "$(id -u)" -eq 0 ]; then
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
	tar -C "$TOP" --exclude=.git --exclude=results --exclude=tmp_check \
		--exclude='tmp_check_*' --exclude=output_iso -cf - . | tar -C "$dir" -xf -
	chown -R postgres: "$dir"
fi

status=0
as_server_user make -C "$dir" -s with_llvm=no unitcheck installcheck || status=$?
if [ "$status" -ne 0 ]; then
	for f in "$dir/regression.diffs" "$dir/output_iso/regression.diffs"; do
		[ -s "$f" ] && { say "$f"; cat "$f"; }
	done
	for f in "$dir"/tmp_check/log/regress_log_*; do
		[ -f "$f" ] && { say "$f"; tail -n 50 "$f"; }
	done
fi
exit "$status"
