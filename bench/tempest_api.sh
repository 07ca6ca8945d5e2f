#!/usr/bin/env bash
# Runs upstream's compute and image API tests (Tempest 47.0.0) against a fresh
# demo Corral, as a user would: Tempest from the package index in its own
# cached virtualenv (var/tempest-venv), `manage.py serve_demo` on a free port
# with its own SQLite database and var directory under a temporary directory,
# a tempest.conf with identity v3 against Corral's own /identity, dynamic
# credentials from the demo's admin, and the feature flags off for what Corral
# does not claim (networks, volumes, key pairs, security groups, consoles,
# hypervisor-only actions, Glance's metadata definitions); what has no flag is
# in bench/tempest_exclude.txt, each with its reason. The compute classes
# Tempest skips without Neutron only because they ask for a default network
# (servers, metadata, tags, instance actions, live migration...) run without
# that request (bench/tempest_shim/sitecustomize.py; TEMPEST_STOCK=1: skipped,
# as stock Tempest does).
#
#   bench/tempest_api.sh                   # the whole set: ^tempest\.api\.(compute|image)\.
#   bench/tempest_api.sh 'REGEX' [...]     # a regex of test ids instead; further arguments go to `tempest run`
#
# Each run keeps its workspace under var/tempest-runs/<UTC time>/ (var/tempest-runs/last
# points at the newest): etc/tempest.conf, tempest.log (Tempest's requests),
# corral.log (serve_demo's output), run.log (tempest run's output),
# results.subunit and failing.txt. Prints the counts at the end; exits
# non-zero when a test failed. Not part of CI: the whole set takes about an
# hour on two loaded cores. CONCURRENCY (default 2) sets Tempest's workers.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
python="${PYTHON:-$root/.venv/bin/python}"  # (stestr reads PYTHON too: unset for tempest run)
[ -x "$python" ] || python="$(command -v python3)"
regex="${1:-^tempest\.api\.(compute|image)\.}"
shift || true
concurrency="${CONCURRENCY:-2}"

# Tempest 47.0.0 in var/tempest-venv, built once (tests/provision.py, as the tests' own tools).
venv=$(PYTHONPATH="$root" "$python" -c 'from tests.provision import tempest_venv; print(tempest_venv())')
run_dir="$root/var/tempest-runs/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$run_dir/etc"
ln -sfn "$run_dir" "$root/var/tempest-runs/last"
work=$(mktemp -d)
corral_pid=
cleanup() {
  if [ -n "$corral_pid" ] && kill -0 "$corral_pid" 2>/dev/null; then
    kill -TERM "$corral_pid" 2>/dev/null || true
    wait "$corral_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# A fresh demo Corral on a free port, with a database and var directory of its own.
port=$("$python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url="http://127.0.0.1:$port"
echo "Starting a demo Corral at $url (log: $run_dir/corral.log)..."
CORRAL_VAR_DIR="$work" DATABASE_URL="sqlite:///$work/corral.sqlite3" SECRET_KEY="tempest-$port" \
  PYTHONPATH="$root" "$python" manage.py serve_demo "127.0.0.1:$port" >"$run_dir/corral.log" 2>&1 &
corral_pid=$!
for _ in $(seq 1 300); do
  grep -q "Corral is running" "$run_dir/corral.log" && break
  kill -0 "$corral_pid" 2>/dev/null || { cat "$run_dir/corral.log"; echo "serve_demo stopped" >&2; exit 1; }
  sleep 1
done
grep -q "Corral is running" "$run_dir/corral.log" || { echo "serve_demo did not start in 300 s" >&2; exit 1; }
# gunicorn was started: wait until it answers.
"$python" - "$url/identity/v3" <<'EOF'
import sys, time, urllib.request

for _ in range(120):
    try:
        urllib.request.urlopen(sys.argv[1], timeout=10).close()
        sys.exit(0)
    except OSError:
        time.sleep(1)
sys.exit(f"{sys.argv[1]} did not answer in 120 s")
EOF

# The demo's images and flavors Tempest boots from (image_ref_alt: a second
# image made here, with no properties, so that any host takes it).
read -r image_ref image_ref_alt <<<"$("$python" - "$url" <<'EOF'
import json, sys, time, urllib.request

url = sys.argv[1]


def call(method, path, body=None, token=None, content_type="application/json"):
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    request = urllib.request.Request(url + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", content_type)
    if token:
        request.add_header("X-Auth-Token", token)
    with urllib.request.urlopen(request, timeout=120) as response:
        return response.headers, response.read()


auth = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
    "name": "admin", "domain": {"id": "default"}, "password": "corral-demo"}}},
    "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}}
headers, _ = call("POST", "/identity/v3/auth/tokens", auth)
token = headers["X-Subject-Token"]
images = json.loads(call("GET", "/image/v2/images?name=demo-linux", token=token)[1])["images"]
alt = json.loads(call("POST", "/image/v2/images", {
    "name": "tempest-alt", "disk_format": "raw", "container_format": "bare", "visibility": "public"}, token=token)[1])
call("PUT", f"/image/v2/images/{alt['id']}/file", b"tempest alternative image\n" * 4096, token=token,
     content_type="application/octet-stream")
print(images[0]["id"], alt["id"])
EOF
)"
[ -n "${image_ref_alt:-}" ] || { echo "could not find or create the images Tempest boots from" >&2; exit 1; }

cat >"$run_dir/etc/tempest.conf" <<EOF
[DEFAULT]
log_dir = $run_dir
log_file = tempest.log
debug = true

[auth]
use_dynamic_credentials = true
create_isolated_networks = false
admin_username = admin
admin_password = corral-demo
admin_project_name = admin
admin_domain_name = Default

[identity]
uri_v3 = $url/identity/v3
auth_version = v3
region = RegionOne
admin_role = admin
default_domain_id = default

[identity-feature-enabled]
api_v2 = false
security_compliance = false

[service_available]
nova = true
glance = true
# No Neutron: Tempest would skip every compute class asking for a default
# network; bench/tempest_shim runs them without it (TEMPEST_STOCK=1: not).
neutron = false
cinder = false
swift = false
heat = false
horizon = false

[compute]
image_ref = $image_ref
image_ref_alt = $image_ref_alt
flavor_ref = 1
flavor_ref_alt = 2
min_microversion = 2.1
max_microversion = 2.104
min_compute_nodes = 2
region = RegionOne
build_timeout = 300

[compute-feature-enabled]
# What Corral serves.
resize = true
cold_migration = true
live_migration = true
config_drive = true
metadata_service = false
scheduler_enabled_filters = ComputeFilter,ImagePropertiesFilter,AggregateInstanceExtraSpecsFilter,AggregateMultiTenancyIsolation,AggregateImagePropertiesIsolation,AggregateIoOpsFilter,AggregateNumInstancesFilter,AggregateTypeAffinityFilter,SameHostFilter,DifferentHostFilter,ServerGroupAntiAffinityFilter,ServerGroupAffinityFilter
# What Corral does not claim: consoles, hypervisor-only actions, volumes, networks.
# OS-DCF:diskConfig is accepted and not kept (docs/compatibility.md): off.
disk_config = false
console_output = false
vnc_console = false
spice_console = false
serial_console = false
rdp_console = false
rescue = false
stable_rescue = false
shelve = false
shelve_migrate = false
suspend = false
pause = false
snapshot = false
change_password = false
interface_attach = false
personality = false
live_migrate_back_and_forth = false
# Corral moves no disk: a block migration is a live migration here.
block_migration_for_live_migration = true
volume_backed_live_migration = false
can_migrate_between_any_hosts = true
attach_encrypted_volume = false
swap_volume = false
volume_multiattach = false
nova_cert = false
xenapi_apis = false
hostname_fqdn_sanitization = true

[image]
region = RegionOne

[image-feature-enabled]
api_v2 = true
api_v1 = false
import_image = false
os_glance_reserved = false
manage_locations = false
image_conversion = false

[validation]
run_validation = false

[oslo_concurrency]
lock_path = $run_dir/locks
EOF

echo "Tempest $("$venv/bin/tempest" --version 2>&1 | tail -1) against $url: --regex '$regex' --concurrency $concurrency"
cd "$run_dir"
status=0
shim=(PYTHONPATH="$root/bench/tempest_shim" CORRAL_TEMPEST_NO_DEFAULT_NETWORK=1)
[ "${TEMPEST_STOCK:-0}" = 1 ] && shim=()
env -u PYTHON "${shim[@]}" PATH="$venv/bin:$PATH" "$venv/bin/tempest" run --config-file "$run_dir/etc/tempest.conf" --regex "$regex" \
  --exclude-list "$root/bench/tempest_exclude.txt" --concurrency "$concurrency" "$@" 2>&1 | tee "$run_dir/run.log" \
  || status=$?
"$venv/bin/stestr" last --subunit >"$run_dir/results.subunit" 2>/dev/null || true
"$venv/bin/stestr" failing --list >"$run_dir/failing.txt" 2>/dev/null || true
echo
echo "Tempest $("$venv/bin/pip" show tempest 2>/dev/null | sed -n 's/^Version: //p'), --regex '$regex'; run kept in $run_dir"
sed -n '/^Totals/,/Failed:/p' "$run_dir/run.log"
[ -s "$run_dir/failing.txt" ] && { echo "Failed tests ($run_dir/failing.txt):"; cat "$run_dir/failing.txt"; }
exit "$status"
