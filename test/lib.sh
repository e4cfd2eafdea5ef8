# Shared set-up for test/run.sh, test/demo.sh and the benchmarks.
#
# They must work on a fresh Debian bookworm machine, run by root or by a
# user with sudo.  PostgreSQL refuses to run as root, so servers run as the
# "postgres" account when we are root, and as the calling user otherwise.

set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PACKAGES="postgresql-15 postgresql-server-dev-15 libipc-run-perl make gcc"

say() { printf '== %s\n' "$*" >&2; }

# The benchmarks' figures: ratio a / b of two numbers, with 2 decimals;
# rows per second, for $1 rows in $2 seconds.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
rate() {
	awk -v r="$1" -v t="$2" 'BEGIN {
		r /= t
		if (r >= 1e6) printf "%.2fM", r / 1e6; else printf "%.1fk", r / 1e3
	}'
}

as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"
	elif command -v sudo >/dev/null; then sudo "$@"
	else
		say "need root for: $*"
		return 1
	fi
}

# PG_CONFIG may point at another PostgreSQL 15 installation.  It need not
# exist yet: need_packages installs it (Debian's postgresql-client-15).
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}

# Asks pg_config, or gives Debian's path where it is not installed yet.
pg_dir() {
	local what=$1 fallback=$2
	if [ -x "$PG_CONFIG" ]; then "$PG_CONFIG" "--$what"; else echo "$fallback"; fi
}

# The probes, one per thing the build and the tests use.  Each is a
# function so that test/setup_test.sh can report any of them missing.
has_command() { command -v "$1" >/dev/null; }
has_perl_module() { perl "-M$1" -e1 2>/dev/null; }

# The Debian packages still needed, on one line, each named once.  The
# server headers are checked by postgres.h itself: pgxs.mk and pg_config
# come with postgresql-client-15, which is there wherever the server is,
# so they prove nothing about the headers.
missing_packages() {
	local missing=()
	[ -x "$(pg_dir bindir /usr/lib/postgresql/15/bin)/postgres" ] || missing+=(postgresql-15)
	if [ ! -f "$(pg_dir includedir-server /usr/include/postgresql/15/server)/postgres.h" ] ||
		[ ! -f "$(pg_dir pgxs /usr/lib/postgresql/15/lib/pgxs/src/makefiles/pgxs.mk)" ]; then
		missing+=(postgresql-server-dev-15)
	fi
	has_perl_module IPC::Run || missing+=(libipc-run-perl)
	has_command make || missing+=(make)
	has_command gcc || missing+=(gcc)
	echo "${missing[*]}"
}

# Installs what is missing, or says exactly what to install.
need_packages() {
	local missing
	missing=$(missing_packages)
	if [ -n "$missing" ]; then
		say "installing $missing"
		# shellcheck disable=SC2086 # one word per package
		if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq ||
			! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null; then
			say "could not install packages; as root, run:"
			say "  apt-get install -y $PACKAGES"
			exit 1
		fi
	fi
	PGBIN=$(pg_dir bindir /usr/lib/postgresql/15/bin)
}

PGBIN=$(pg_dir bindir /usr/lib/postgresql/15/bin)

# Installs packages that some tests use when it can (those tests skip,
# saying why, without them); never fails.
want_packages() {
	local p missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	say "installing ${missing[*]}, which some tests use"
	if ! { as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; }; then
		say "could not install ${missing[*]}: the tests that need it will be skipped"
	fi
	return 0
}

# Installs the built extension (make arguments in "$@").  Install scripts
# left by another checkout would be taken by CREATE EXTENSION (a full
# install script of the default version beats the upgrade chain), so the
# extension's scripts are replaced, not added to.
install_extension() {
	local scripts
	scripts="$("$PG_CONFIG" --sharedir)/extension/windowing--"
	as_root sh -c "rm -f '$scripts'*.sql"
	as_root make -C "$TOP" -s with_llvm=no PG_CONFIG="$PG_CONFIG" "$@" install >/dev/null
}

build_and_install() {
	say "building and installing the extension"
	make -C "$TOP" -s with_llvm=no PG_CONFIG="$PG_CONFIG" >/dev/null
	install_extension
}

# The account servers run as.
server_user() {
	if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi
}

as_server_user() {
	if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# A throwaway cluster on a unix socket in $1 (no TCP at all).
start_cluster() {
	local dir=$1
	mkdir -p "$dir"
	[ "$(id -u)" -ne 0 ] || chown postgres: "$dir"
	as_server_user "$PGBIN/initdb" -D "$dir/data" -A trust -U postgres >/dev/null
	cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$dir'
shared_preload_libraries = 'windowing'
fsync = off
CONF
	as_server_user "$PGBIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null
	export PGHOST=$dir PGUSER=postgres PGDATABASE=postgres
}

# A throwaway cluster in a new temporary folder, $DIR, gone at exit.
start_temp_cluster() {
	DIR=$(mktemp -d)
	trap 'stop_cluster "$DIR"; rm -rf "$DIR"' EXIT
	start_cluster "$DIR"
}

# Adds settings ($1: lines of postgresql.conf) to the cluster that
# start_temp_cluster started, and restarts it with them.
restart_with() {
	printf '%s\n' "$1" >>"$DIR/data/postgresql.conf"
	as_server_user "$PGBIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w restart >/dev/null
}

stop_cluster() {
	as_server_user "$PGBIN/pg_ctl" -D "$1/data" -m fast -w stop >/dev/null || true
}

psql_cluster() {
	as_server_user env PGHOST="$PGHOST" PGUSER=postgres "$PGBIN/psql" -X -v ON_ERROR_STOP=1 "$@"
}

# For the benchmarks: psql_cluster, unaligned, tuples only, without notices.
sql() { PGOPTIONS='-c client_min_messages=warning' psql_cluster -qAt "$@"; }

# For the benchmarks: the window assigner and aggregates of a pipeline of
# shape $1: tumbling 1 minute count + sum; sessions with a 1-minute gap;
# hopping windows of 10 minutes sliding by 1 minute (10 windows a row) in
# append mode, which writes a result row per window and key.
bench_shape() {
	case "$1" in
	tumbling) echo "windowing.tumbling('1 minute'), 'count(*) AS n, sum(v) AS total'" ;;
	session) echo "windowing.session('1 minute'), 'count(*) AS n, sum(v) AS total'" ;;
	hopping) echo "windowing.hopping('10 minutes', '1 minute'), 'count(*) AS n, sum(v) AS total', emit => 'append'" ;;
	*) echo "unknown shape $1" >&2; exit 1 ;;
	esac
}

# For the benchmarks: the median, min and max of the times in $1, separated by spaces.
stats() {
	tr -s ' ' '\n' <<<"$1" | grep . | sort -g | awk '
		{ t[NR] = $1 }
		END {
			m = NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
			print m, t[1], t[NR]
		}'
}
