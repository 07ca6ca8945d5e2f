#!/usr/bin/env bash
# Set up and start Corral's Placement service for benchmarking, the
# counterpart of ../shared/bench/upstream_placement.sh (compare.py side B).
#
#   corral_placement.sh setup WORKDIR DBURL
#       DBURL: sqlite, or postgres://USER@HOST:PORT/DBNAME. For PostgreSQL the
#       database DBNAME is dropped and re-created (USER needs CREATEDB), so
#       every setup starts empty; then `manage.py migrate`. The URL is kept in
#       WORKDIR/database_url for `start`.
#   corral_placement.sh start WORKDIR PORT [WORKERS]
#       execs gunicorn config.wsgi on 127.0.0.1:PORT with WORKERS (default 2)
#       sync workers, CORRAL_SERVICE=placement (API at /), AUTH_STRATEGY=noauth2,
#       DEBUG off; stays in the foreground (compare.py stops it with SIGTERM).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python="${PYTHON:-$root/.venv/bin/python}"
cmd=${1:?setup or start}
wd=${2:?workdir}
mkdir -p "$wd"
wd=$(cd "$wd" && pwd)

export CORRAL_SERVICE=placement AUTH_STRATEGY=noauth2 DEBUG=0
export CORRAL_VAR_DIR="$wd" SECRET_KEY="${SECRET_KEY:-corral-placement-bench}"

case "$cmd" in
setup)
    db=${3:?sqlite or a postgres:// URL}
    if [ "$db" = sqlite ]; then
        rm -f "$wd"/placement.db*
        db="sqlite:///$wd/placement.db"
    else
        "$python" - "$db" <<'PY'
import sys
from urllib.parse import urlsplit

import psycopg

url = urlsplit(sys.argv[1])
name = url.path.lstrip("/")
if name in ("", "postgres", "test", "test_test"):
    sys.exit(f"refusing to drop database {name!r}: use a database of its own")
with psycopg.connect(host=url.hostname or "127.0.0.1", port=url.port or 5432, user=url.username,
                     password=url.password, dbname="postgres", autocommit=True) as conn:
    conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
    conn.execute(f'CREATE DATABASE "{name}"')
PY
    fi
    echo "$db" > "$wd/database_url"
    cd "$root"
    DATABASE_URL="$db" "$python" manage.py migrate -v0
    ;;
start)
    port=${3:?port}
    workers=${4:-2}
    cd "$root"
    # --timeout 600 as for upstream: a long un-limited candidates query at
    # N=10000 must not get its worker killed.
    DATABASE_URL=$(cat "$wd/database_url") exec "$(dirname "$python")/gunicorn" \
        -b "127.0.0.1:$port" -w "$workers" --timeout 600 --no-control-socket config.wsgi
    ;;
*)
    echo "unknown command $cmd" >&2
    exit 2
    ;;
esac
