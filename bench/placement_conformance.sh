#!/usr/bin/env bash
# Runs upstream Placement's own gabbi files (the 31 empty-database files,
# 535 tests) against Corral's placement, a fresh SQLite database per file,
# served by gunicorn with CORRAL_SERVICE=placement and AUTH_STRATEGY=noauth2.
#
#   bench/placement_conformance.sh [extra harness options, e.g. --files traits.yaml -v]
#
# Exits non-zero when any test fails (--strict). Needs gabbi (test extras)
# and the harness in ../shared/conformance/ (or CONFORMANCE_HARNESS=path).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
python="${PYTHON:-$root/.venv/bin/python}"
harness="${CONFORMANCE_HARNESS:-$root/../shared/conformance/placement_gabbits.py}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One migrated template database, copied for every file.
DATABASE_URL="sqlite:///$work/template.db" AUTH_STRATEGY=noauth2 CORRAL_SERVICE=placement \
  CORRAL_VAR_DIR="$work" SECRET_KEY=conformance "$python" manage.py migrate -v0

"$python" "$harness" --strict \
  --setup-cmd "cp '$work/template.db' {workdir}/p.db" \
  --server-cmd "DATABASE_URL=sqlite:///{workdir}/p.db AUTH_STRATEGY=noauth2 CORRAL_SERVICE=placement CORRAL_VAR_DIR={workdir} SECRET_KEY=conformance exec '$(dirname "$python")/gunicorn' -b 127.0.0.1:{port} -w 1 --no-control-socket config.wsgi" \
  "$@"
