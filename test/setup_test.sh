#!/usr/bin/env bash
# Checks the set-up that test/run.sh and test/demo.sh do before anything
# else: with each piece the build needs reported missing in turn, which
# Debian packages need_packages would install, and that make alone names
# the missing package instead of failing in the compiler.  Needs no server,
# no root and no network: apt-get is never run, only recorded.
#
#   test/setup_test.sh
set -uo pipefail

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

check() {
	local name=$1 want=$2 got=$3
	if [ "$got" = "$want" ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		printf 'FAIL %s\n  want: %s\n  got:  %s\n' "$name" "$want" "$got"
	fi
}

# A PostgreSQL tree with a pg_config that reports it: every piece present.
make_tree() {
	local t=$1
	rm -rf "$t"
	mkdir -p "$t/bin" "$t/include/server" "$t/pgxs"
	touch "$t/bin/postgres" "$t/include/server/postgres.h" "$t/pgxs/pgxs.mk"
	chmod +x "$t/bin/postgres"
	cat >"$t/bin/pg_config" <<EOF
#!/bin/sh
case "\$1" in
--bindir) echo "$t/bin" ;;
--includedir-server) echo "$t/include/server" ;;
--pgxs) echo "$t/pgxs/pgxs.mk" ;;
*) exit 1 ;;
esac
EOF
	chmod +x "$t/bin/pg_config"
}

# Runs need_packages in a subshell where the pieces named in $1 (a
# comma-separated list) are missing; prints the apt-get install line it ran,
# or nothing.
need() {
	local gone=",$1," tree=$work/pg log=$work/apt.log
	: >"$log"
	make_tree "$tree"
	case $gone in *,postgres,*) rm "$tree/bin/postgres" ;; esac
	case $gone in *,headers,*) rm "$tree/include/server/postgres.h" ;; esac
	case $gone in *,pgxs,*) rm "$tree/pgxs/pgxs.mk" ;; esac
	(
		PG_CONFIG=$tree/bin/pg_config
		# shellcheck source=test/lib.sh
		source "$(dirname "$0")/lib.sh"
		has_command() { case $gone in *,"$1",*) return 1 ;; esac; }
		has_perl_module() { case $gone in *,"$1",*) return 1 ;; esac; }
		# as_root env DEBIAN_FRONTEND=... apt-get ...: record the install
		as_root() { shift 2; [ "$2" != install ] || echo "$*" >>"$log"; }
		need_packages 2>/dev/null
	)
	cat "$log"
}

apt="apt-get install -y -qq"
check "nothing missing" "" "$(need '')"
check "server missing" "$apt postgresql-15" "$(need postgres)"
check "headers missing (the server installed)" "$apt postgresql-server-dev-15" "$(need headers)"
check "pgxs missing" "$apt postgresql-server-dev-15" "$(need pgxs)"
check "headers and pgxs missing, named once" "$apt postgresql-server-dev-15" "$(need headers,pgxs)"
check "IPC::Run missing" "$apt libipc-run-perl" "$(need IPC::Run)"
check "make missing" "$apt make" "$(need make)"
check "gcc missing" "$apt gcc" "$(need gcc)"
check "everything missing" \
	"$apt postgresql-15 postgresql-server-dev-15 libipc-run-perl make gcc" \
	"$(need postgres,headers,IPC::Run,make,gcc)"

# Without pg_config at all, the paths are Debian's.
check "no pg_config: Debian's bindir" /usr/lib/postgresql/15/bin \
	"$(PG_CONFIG=$work/none; source "$(dirname "$0")/lib.sh"; pg_dir bindir /usr/lib/postgresql/15/bin)"

# make alone, on a tree without the headers: one line naming the package.
top=$(cd "$(dirname "$0")/.." && pwd)
make_tree "$work/pg"
rm "$work/pg/include/server/postgres.h"
out=$(make -C "$top" -s PG_CONFIG="$work/pg/bin/pg_config" 2>&1)
check "make without headers fails" 2 "$?"
check "make names the package on one line" "1 yes" \
	"$(printf '%s\n' "$out" | wc -l) $(grep -q 'install postgresql-server-dev-15' <<<"$out" && echo yes)"
out=$(make -C "$top" -s PG_CONFIG="$work/none" 2>&1)
check "make without pg_config names the package" yes \
	"$(grep -q 'install postgresql-server-dev-15' <<<"$out" && echo yes)"

echo "setup: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
