"""Corral settings, read from environment variables.

Nothing set gives the embedded mode: a SQLite file under ``var/``, Celery
tasks run eagerly in the web process, and placement calls go to this same
server's ``/placement/``. docs/configuration.md lists every variable
(tests/test_docs.py checks it).
"""

import os
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import dj_database_url

from config import request_context

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CORRAL_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else default


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value not in (None, "") else default


def _secret_key() -> str:
    if os.environ.get("SECRET_KEY"):
        return os.environ["SECRET_KEY"]
    # Embedded mode: a random key kept under var/ so sessions survive restarts.
    path = VAR_DIR / "secret_key"
    if not path.exists():
        import secrets

        path.write_text(secrets.token_urlsafe(50))
    return path.read_text().strip()


SECRET_KEY = _secret_key()
DEBUG = env_bool("DEBUG", False)
# The host names the server answers to, so that a forged Host header can
# neither rewrite the URLs built from the request (service catalog, Location
# headers, links) nor reach the server under a name it does not own:
# ALLOWED_HOSTS when set; else the local names (the demo on 127.0.0.1 and
# localhost), this machine's own host name(s) and addresses, and PUBLIC_URL's
# host when set. Any other Host is refused with 400 (in the API's own JSON
# format on API paths). Never "*" unless ALLOWED_HOSTS says so.
LOCAL_HOSTS = ["127.0.0.1", "localhost", "[::1]"]
_WILDCARD_ADDRESSES = ("0.0.0.0", "::")


def own_host_names() -> list[str]:
    """This machine's host name, fully qualified name and the addresses it
    resolves to, as ALLOWED_HOSTS entries (IPv6 in brackets). The lookups are
    the resolver's usual ones for the machine's own name (its hosts file,
    mostly); any failure leaves out what it could not find, never fails."""
    names: list[str] = []
    try:
        hostname = socket.gethostname()
    except OSError:
        return names
    names.append(hostname)
    try:
        names.append(socket.getfqdn(hostname))
        infos = socket.getaddrinfo(hostname, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        infos = []
    for _family, _type, _proto, _canonical, sockaddr in infos:
        address = str(sockaddr[0]).split("%", 1)[0]  # no IPv6 scope id
        names.append(f"[{address}]" if ":" in address else address)
    return [name for name in names if name and name not in _WILDCARD_ADDRESSES and name.strip("[]") != "::"]


def _default_allowed_hosts() -> list[str]:
    public_host = urlsplit(os.environ.get("PUBLIC_URL", "")).hostname
    public = [f"[{public_host}]" if ":" in public_host else public_host] if public_host else []
    return list(dict.fromkeys([*public, *LOCAL_HOSTS, *own_host_names()]))


ALLOWED_HOSTS = [h.strip() for h in os.environ.get("ALLOWED_HOSTS", "").split(",") if h.strip()] or (
    _default_allowed_hosts()
)
CSRF_TRUSTED_ORIGINS = [o.strip() for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "django_celery_beat",
    "aggregates",
    "placement",
    "dashboard",
]

MIDDLEWARE = [
    "aggregates.metrics.middleware.RequestMetricsMiddleware",
    "aggregates.compute_api.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "dashboard.middleware.KeystoneConsoleMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "dashboard.middleware.ConsoleSecurityMiddleware",
]

ROOT_URLCONF = "config.urls"
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"

# --- Database -------------------------------------------------------------
DATABASE_URL = os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'corral.sqlite3'}"
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DB_CONN_MAX_AGE", 60))}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Writers queue up instead of failing with "database is locked".
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    # Tests use a file too, as the embedded mode does: Django's default
    # in-memory test database runs in SQLite's shared-cache mode, where a
    # reader and a writer on two threads fail at once with "database table
    # is locked" instead of waiting out the timeout above. One file per test
    # run (process), so that two runs in one checkout never share it.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-corral-{os.getpid()}.sqlite3")}

# PostgreSQL keeps the plans of placement's hottest statements (claims,
# aggregate replacements, nova-compute's periodic reads): each is planned
# once a connection (placement/services/prepared.py).
# Off (DB_PREPARED_STATEMENTS=0) behind a pooler that cannot carry prepared
# statements (PgBouncer in transaction mode).
DB_PREPARED_STATEMENTS = env_bool("DB_PREPARED_STATEMENTS", True)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS: list[dict[str, Any]] = []

LOGIN_URL = "dashboard:login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"

# --- Celery ---------------------------------------------------------------
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_RESULT_BACKEND = os.environ.get("CELERY_RESULT_BACKEND") or None
CELERY_BROKER_CONNECTION_TIMEOUT = 3
CELERY_TASK_ACKS_LATE = True
# Without a broker, the longest a request waits for its follow-up work
# (mirroring into placement, builds, moves, deletes) before it answers; what
# is left goes on in the background, and the periodic catch-ups take up
# whatever a stopped process leaves behind. The work holds a database
# connection of its own; None: the request's thread does it all.
FOLLOW_UP_WAIT_SECONDS: float | None = env_float("FOLLOW_UP_WAIT_SECONDS", 0.25)
# The threads of this process that run it (more work waits for one); each
# keeps its database connection while work keeps coming, and ends once idle
# this long.
FOLLOW_UP_THREADS = env_int("FOLLOW_UP_THREADS", 8)
FOLLOW_UP_THREAD_IDLE_SECONDS = env_float("FOLLOW_UP_THREAD_IDLE_SECONDS", 30.0)

# --- OpenStack-facing behaviour ------------------------------------------
# keystone: Corral's own identity, tokens issued by /identity/v3/auth/tokens.
# external-keystone: tokens of the cloud's Keystone (KEYSTONE_AUTH_URL),
# validated with Corral's service user; /identity is not served.
# noauth2: test mode, "X-Auth-Token: admin" is an admin and any other token a plain user. UNSAFE.
AUTH_STRATEGY = os.environ.get("AUTH_STRATEGY", "keystone")
if AUTH_STRATEGY not in ("keystone", "external-keystone", "noauth2"):
    raise RuntimeError("AUTH_STRATEGY must be 'keystone', 'external-keystone' or 'noauth2'")
# The external Keystone (AUTH_STRATEGY=external-keystone) and Corral's service user there.
KEYSTONE_AUTH_URL = os.environ.get("KEYSTONE_AUTH_URL", "").rstrip("/")
KEYSTONE_SERVICE_USERNAME = os.environ.get("KEYSTONE_SERVICE_USERNAME", "corral")
KEYSTONE_SERVICE_PASSWORD = os.environ.get("KEYSTONE_SERVICE_PASSWORD", "")
KEYSTONE_SERVICE_PROJECT_NAME = os.environ.get("KEYSTONE_SERVICE_PROJECT_NAME", "service")
KEYSTONE_SERVICE_USER_DOMAIN_NAME = os.environ.get("KEYSTONE_SERVICE_USER_DOMAIN_NAME", "Default")
KEYSTONE_SERVICE_PROJECT_DOMAIN_NAME = os.environ.get("KEYSTONE_SERVICE_PROJECT_DOMAIN_NAME", "Default")
# Seconds a token's validation is kept (keystonemiddleware's token_cache_time);
# a token revoked in Keystone is refused once its entry expires.
KEYSTONE_TOKEN_CACHE_SECONDS = env_int("KEYSTONE_TOKEN_CACHE_SECONDS", 300)
# Where validations are kept: empty, each process's memory; a redis:// URL, shared by every worker.
KEYSTONE_TOKEN_CACHE_URL = os.environ.get("KEYSTONE_TOKEN_CACHE_URL", "")
# Seconds to wait for Keystone (to connect, and for each answer): past it, 503.
KEYSTONE_TIMEOUT = env_float("KEYSTONE_TIMEOUT", 5.0)
if AUTH_STRATEGY == "external-keystone" and not KEYSTONE_AUTH_URL:
    raise RuntimeError("AUTH_STRATEGY=external-keystone needs KEYSTONE_AUTH_URL")
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "keystone_tokens": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": KEYSTONE_TOKEN_CACHE_URL}
        if KEYSTONE_TOKEN_CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "keystone-tokens"}
    ),
}
# Who may do what: an operator policy file in oslo.policy's YAML format,
# overriding config/policy.py's defaults (`manage.py show_policy` prints the result).
POLICY_FILE = os.environ.get("POLICY_FILE", "")
TOKEN_EXPIRATION = env_int("TOKEN_EXPIRATION", 3600)
# Base URL used for the service catalog and links; built from each request when empty.
PUBLIC_URL = os.environ.get("PUBLIC_URL", "").rstrip("/")
# Login throttle (console and POST /identity/v3/auth/tokens): failed attempts
# allowed per user name and per source address within the window (seconds).
LOGIN_THROTTLE_USER_ATTEMPTS = env_int("LOGIN_THROTTLE_USER_ATTEMPTS", 5)
LOGIN_THROTTLE_ADDRESS_ATTEMPTS = env_int("LOGIN_THROTTLE_ADDRESS_ATTEMPTS", 30)
LOGIN_THROTTLE_WINDOW = env_int("LOGIN_THROTTLE_WINDOW", 300)
# The console pages' Content-Security-Policy: its own static files only.
CONSOLE_CONTENT_SECURITY_POLICY = os.environ.get(
    "CONSOLE_CONTENT_SECURITY_POLICY",
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'",
)
REGION_NAME = os.environ.get("REGION_NAME", "RegionOne")
# The Placement API the compute side and the console use. Empty: Corral's own,
# called in process (no socket); any URL: that placement, over HTTP.
PLACEMENT_URL = os.environ.get("PLACEMENT_URL", "")
DEFAULT_AVAILABILITY_ZONE = os.environ.get("DEFAULT_AVAILABILITY_ZONE", "nova")
INTERNAL_SERVICE_AVAILABILITY_ZONE = os.environ.get("INTERNAL_SERVICE_AVAILABILITY_ZONE", "internal")
SERVICE_DOWN_TIME = env_int("SERVICE_DOWN_TIME", 60)
# Which APIs this process serves: "all" (default) or "placement" (placement only, at /).
CORRAL_SERVICE = os.environ.get("CORRAL_SERVICE", "all")
if CORRAL_SERVICE == "placement":
    # Placement alone serves no console: none of the console's sessions,
    # logins, CSRF tokens, messages, static files or page headers, which
    # every API request would otherwise pass through.
    MIDDLEWARE = [
        "aggregates.metrics.middleware.RequestMetricsMiddleware",
        "aggregates.compute_api.middleware.RequestIdMiddleware",
        "django.middleware.security.SecurityMiddleware",
        "django.middleware.common.CommonMiddleware",
    ]
    # The admin site is not served either (config/urls.py), so its checks
    # for the console's middleware do not apply.
    SILENCED_SYSTEM_CHECKS = ["admin.E408", "admin.E409", "admin.E410"]

REST_FRAMEWORK = {
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
}

# Every log line carries the request ids (and the user, project and route of
# a request): LOG_FORMAT "text" (default) or "json" (one object a line).
LOG_FORMAT = os.environ.get("LOG_FORMAT", "text")
LOGGING = request_context.logging_config(LOG_FORMAT, os.environ.get("LOG_LEVEL", "INFO"))

# Placement checks keystone-mode tokens through this callable (token, request_id)
# -> Caller or None, named here so that placement/ never imports aggregates/.
PLACEMENT_TOKEN_VALIDATOR = os.environ.get("PLACEMENT_TOKEN_VALIDATOR", "aggregates.identity.keystone.check_token")

# Upstream Placement's [placement]max_allocation_candidates: the most
# candidates one GET /allocation_candidates generates (-1: no limit), and its
# allocation_candidates_generation_strategy: "depth-first" (every candidate of
# one tree before the next) or "breadth-first" (one of each tree in turn).
PLACEMENT_MAX_ALLOCATION_CANDIDATES = env_int("PLACEMENT_MAX_ALLOCATION_CANDIDATES", -1)
PLACEMENT_ALLOCATION_CANDIDATES_GENERATION_STRATEGY = os.environ.get(
    "PLACEMENT_ALLOCATION_CANDIDATES_GENERATION_STRATEGY", "depth-first"
)
if PLACEMENT_ALLOCATION_CANDIDATES_GENERATION_STRATEGY not in ("depth-first", "breadth-first"):
    raise RuntimeError("PLACEMENT_ALLOCATION_CANDIDATES_GENERATION_STRATEGY must be 'depth-first' or 'breadth-first'")

# --- Mirroring aggregates into placement ------------------------------------
# Token sent to placement. Empty: "admin" under noauth2, else a token that
# Corral issues itself for its service user (PLACEMENT_SERVICE_USER).
PLACEMENT_AUTH_TOKEN = os.environ.get("PLACEMENT_AUTH_TOKEN", "")
PLACEMENT_SERVICE_USER = os.environ.get("PLACEMENT_SERVICE_USER", "corral-placement")
# The placement client's token provider, a callable (renew=False) -> token,
# named here so that the client never imports identity.
PLACEMENT_TOKEN_PROVIDER = os.environ.get("PLACEMENT_TOKEN_PROVIDER", "aggregates.identity.service_token.service_token")
PLACEMENT_CONNECT_TIMEOUT = float(os.environ.get("PLACEMENT_CONNECT_TIMEOUT", "3"))
PLACEMENT_READ_TIMEOUT = float(os.environ.get("PLACEMENT_READ_TIMEOUT", "30"))
# Seconds the console may show a placement answer read this long ago.
PLACEMENT_CONSOLE_CACHE_SECONDS = float(os.environ.get("PLACEMENT_CONSOLE_CACHE_SECONDS", "5"))
# A mirror request that failed this many times is marked failed (the
# reconciler still repairs its association).
PLACEMENT_MIRROR_MAX_ATTEMPTS = env_int("PLACEMENT_MIRROR_MAX_ATTEMPTS", 12)
# The schedules stored in the database (django-celery-beat), sent by one beat
# at a time: the one holding the beat lease; every beat touches
# BEAT_HEARTBEAT_FILE on each tick (liveness) (aggregates/jobs/beat.py).
CELERY_BEAT_SCHEDULER = "aggregates.jobs.beat:SingleBeatScheduler"
# Seconds the beat lease lasts: its holder renews it every third of that; a
# standby beat takes over at most this long after the holder dies.
BEAT_LEASE_SECONDS = max(1, env_int("BEAT_LEASE_SECONDS", 30))
# Publishing gives up after one immediate retry, so that a dead broker delays
# an operator's request by a moment, not seconds (the outbox keeps the work).
CELERY_BROKER_TRANSPORT_OPTIONS = {"max_retries": 1, "interval_start": 0}

# --- Compute nodes as placement resource providers ---------------------------
# Allocation ratios and host reservations of the VCPU, MEMORY_MB and DISK_GB
# inventories (Nova's initial_*_allocation_ratio and reserved_host_*
# defaults); a registration may override them per host.
CPU_ALLOCATION_RATIO = float(os.environ.get("CPU_ALLOCATION_RATIO", "4.0"))
RAM_ALLOCATION_RATIO = float(os.environ.get("RAM_ALLOCATION_RATIO", "1.0"))
DISK_ALLOCATION_RATIO = float(os.environ.get("DISK_ALLOCATION_RATIO", "1.0"))
RESERVED_HOST_CPUS = env_int("RESERVED_HOST_CPUS", 0)
RESERVED_HOST_MEMORY_MB = env_int("RESERVED_HOST_MEMORY_MB", 512)
RESERVED_HOST_DISK_MB = env_int("RESERVED_HOST_DISK_MB", 0)

# --- Console static files -----------------------------------------------------
# WhiteNoise serves the console's assets from the app itself (no CDN, no
# separate web server). Without collectstatic it finds them in the apps.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns about a missing STATIC_ROOT

# --- Images (the Glance v2 compatible image API) --------------------------------
# Where image data lives (one file per image, named by its id) and the largest
# upload accepted (Glance's image_size_cap default: 1 TiB); bigger ones get 413.
IMAGE_STORE_DIR = Path(os.environ.get("IMAGE_STORE_DIR") or VAR_DIR / "images")
IMAGE_MAX_BYTES = env_int("IMAGE_MAX_BYTES", 1024**4)

# --- Image pre-caching on aggregates (aggregates.precache) --------------------
# The cache driver: "agent" (HTTP to each host's agent) or "inprocess" (a
# simulated host cache under HOST_CACHE_DIR/<host>/, for tests and the demo).
CACHE_DRIVER = os.environ.get("CACHE_DRIVER", "agent")
HOST_CACHE_DIR = Path(os.environ.get("HOST_CACHE_DIR") or VAR_DIR / "host-cache")
# Seconds the in-process driver waits before each image (a simulated slow link).
HOST_CACHE_SIMULATED_DELAY = float(os.environ.get("HOST_CACHE_SIMULATED_DELAY", "0"))
# Hosts cached at the same time (Nova's [image_cache] precache_concurrency, min 1).
IMAGE_CACHE_CONCURRENCY = max(1, env_int("IMAGE_CACHE_CONCURRENCY", 1))
# Seconds one host may take for all its images before it is marked error.
IMAGE_CACHE_HOST_TIMEOUT = float(os.environ.get("IMAGE_CACHE_HOST_TIMEOUT", "1800"))
# The job runner's heartbeat: a running job whose lease is this old lost its
# worker; the drain resumes it, up to IMAGE_CACHE_MAX_ATTEMPTS runs in all.
IMAGE_CACHE_LEASE_SECONDS = float(os.environ.get("IMAGE_CACHE_LEASE_SECONDS", "60"))
IMAGE_CACHE_MAX_ATTEMPTS = env_int("IMAGE_CACHE_MAX_ATTEMPTS", 3)
# The secret Corral presents to host agents (the agent driver); the agents are
# started with the same value (run_host_agent --secret, or this variable).
AGENT_SHARED_SECRET = os.environ.get("AGENT_SHARED_SECRET", "")
# Hosts whose cache listing the console asks at once (an image's "where it is cached").
CACHE_LISTING_CONCURRENCY = max(1, env_int("CACHE_LISTING_CONCURRENCY", 8))

# --- Scheduling (aggregates.scheduling) -----------------------------------------
# Nova's option names, upper-cased, with Nova's defaults.
# Host filters, by Nova's class names, run in this order.
ENABLED_FILTERS = [
    name.strip()
    for name in os.environ.get(
        "ENABLED_FILTERS", "ComputeFilter,ImagePropertiesFilter,ServerGroupAntiAffinityFilter,ServerGroupAffinityFilter"
    ).split(",")
    if name.strip()
]
# Placement pre-filters ([scheduler] section in Nova).
LIMIT_TENANTS_TO_PLACEMENT_AGGREGATE = env_bool("LIMIT_TENANTS_TO_PLACEMENT_AGGREGATE", False)
PLACEMENT_AGGREGATE_REQUIRED_FOR_TENANTS = env_bool("PLACEMENT_AGGREGATE_REQUIRED_FOR_TENANTS", False)
ENABLE_ISOLATED_AGGREGATE_FILTERING = env_bool("ENABLE_ISOLATED_AGGREGATE_FILTERING", False)
QUERY_PLACEMENT_FOR_IMAGE_TYPE_SUPPORT = env_bool("QUERY_PLACEMENT_FOR_IMAGE_TYPE_SUPPORT", False)
MAX_PLACEMENT_RESULTS = max(1, env_int("MAX_PLACEMENT_RESULTS", 1000))
# Addresses (aggregates/addressing): give every server booted with networks
# "auto" a floating address from an external pool too (nova-network's
# auto_assign_floating_ip), once address pools are defined.
AUTO_ASSIGN_FLOATING_IP = env_bool("AUTO_ASSIGN_FLOATING_IP", False)
# [filter_scheduler] options.
HOST_SUBSET_SIZE = max(1, env_int("HOST_SUBSET_SIZE", 1))
# Corral's own: a worker reuses its decision for the next single-server boots
# of the same request for this many seconds, re-checking the host it claims
# (aggregates/scheduling/reuse.py); 0 decides every boot afresh, as Nova does.
SCHEDULER_DECISION_REUSE_SECONDS = max(0.0, float(os.environ.get("SCHEDULER_DECISION_REUSE_SECONDS", "0")))
MAX_IO_OPS_PER_HOST = env_int("MAX_IO_OPS_PER_HOST", 8)
MAX_INSTANCES_PER_HOST = env_int("MAX_INSTANCES_PER_HOST", 50)
AGGREGATE_IMAGE_PROPERTIES_ISOLATION_NAMESPACE = os.environ.get("AGGREGATE_IMAGE_PROPERTIES_ISOLATION_NAMESPACE", "")
AGGREGATE_IMAGE_PROPERTIES_ISOLATION_SEPARATOR = os.environ.get("AGGREGATE_IMAGE_PROPERTIES_ISOLATION_SEPARATOR", ".")
RAM_WEIGHT_MULTIPLIER = float(os.environ.get("RAM_WEIGHT_MULTIPLIER", "1.0"))
CPU_WEIGHT_MULTIPLIER = float(os.environ.get("CPU_WEIGHT_MULTIPLIER", "1.0"))
DISK_WEIGHT_MULTIPLIER = float(os.environ.get("DISK_WEIGHT_MULTIPLIER", "1.0"))
IO_OPS_WEIGHT_MULTIPLIER = float(os.environ.get("IO_OPS_WEIGHT_MULTIPLIER", "-1.0"))
NUM_INSTANCES_WEIGHT_MULTIPLIER = float(os.environ.get("NUM_INSTANCES_WEIGHT_MULTIPLIER", "0.0"))
# Server groups' soft policies (Nova's minimum 0.0: a negative value counts as 0.0).
SOFT_AFFINITY_WEIGHT_MULTIPLIER = max(0.0, float(os.environ.get("SOFT_AFFINITY_WEIGHT_MULTIPLIER", "1.0")))
SOFT_ANTI_AFFINITY_WEIGHT_MULTIPLIER = max(0.0, float(os.environ.get("SOFT_ANTI_AFFINITY_WEIGHT_MULTIPLIER", "1.0")))
# [DEFAULT] default_schedule_zone: the zone of a server created without one
# (empty: none, the server may go anywhere and stays free to move).
DEFAULT_SCHEDULE_ZONE = os.environ.get("DEFAULT_SCHEDULE_ZONE", "")

# --- Server moves (aggregates.moves) ---------------------------------------------
# Nova's [DEFAULT] resize_confirm_window: a cold migration left in VERIFY_RESIZE
# this many seconds is confirmed by corral.moves.confirm_resizes (0: never).
RESIZE_CONFIRM_WINDOW = max(0, env_int("RESIZE_CONFIRM_WINDOW", 0))
# Nova's [DEFAULT] allow_resize_to_same_host: a resize may choose the server's
# own host (both flavors held there until confirmed). Off by default, as in Nova.
ALLOW_RESIZE_TO_SAME_HOST = env_bool("ALLOW_RESIZE_TO_SAME_HOST", False)
# Nova's [DEFAULT] reclaim_instance_interval: with N > 0 a delete leaves the
# server SOFT_DELETED (restorable, its allocation kept) and
# corral.servers.reclaim_deleted deletes it once N seconds have passed; 0: a
# delete is immediate.
RECLAIM_INSTANCE_INTERVAL = max(0, env_int("RECLAIM_INSTANCE_INTERVAL", 0))

# Capacity by flavor (aggregates/capacity): corral.capacity.sample records how
# many more servers of each public flavor fit per zone and aggregate at most
# once every CAPACITY_SAMPLE_SECONDS (the console's history, the
# corral_capacity_servers metric); samples older than CAPACITY_HISTORY_DAYS
# are pruned.
CAPACITY_SAMPLE_SECONDS = max(60, env_int("CAPACITY_SAMPLE_SECONDS", 900))
CAPACITY_HISTORY_DAYS = max(1, env_int("CAPACITY_HISTORY_DAYS", 14))

# Quotas (aggregates/quotas): the defaults of every project, Nova's [quota]
# options of the same names (-1: unlimited); a project's, a user's or the
# "default" quota class's own limits override them. QUOTA_DRIVER "noop"
# (Nova's NoopQuotaDriver) checks nothing and shows every limit unlimited.
QUOTA_DRIVER = os.environ.get("QUOTA_DRIVER", "db")
if QUOTA_DRIVER not in ("db", "noop"):
    raise RuntimeError("QUOTA_DRIVER must be 'db' or 'noop'")
QUOTA_INSTANCES = env_int("QUOTA_INSTANCES", 10)
QUOTA_CORES = env_int("QUOTA_CORES", 20)
QUOTA_RAM = env_int("QUOTA_RAM", 50 * 1024)
QUOTA_METADATA_ITEMS = env_int("QUOTA_METADATA_ITEMS", 128)
QUOTA_INJECTED_FILES = env_int("QUOTA_INJECTED_FILES", 5)
QUOTA_INJECTED_FILE_CONTENT_BYTES = env_int("QUOTA_INJECTED_FILE_CONTENT_BYTES", 10 * 1024)
QUOTA_INJECTED_FILE_PATH_LENGTH = env_int("QUOTA_INJECTED_FILE_PATH_LENGTH", 255)
QUOTA_KEY_PAIRS = env_int("QUOTA_KEY_PAIRS", 100)
QUOTA_SERVER_GROUPS = env_int("QUOTA_SERVER_GROUPS", 10)
QUOTA_SERVER_GROUP_MEMBERS = env_int("QUOTA_SERVER_GROUP_MEMBERS", 10)

# --- Host maintenance (aggregates.maintenance) ------------------------------------
# Servers a maintenance job moves at the same time (one at a time on SQLite).
MAINTENANCE_CONCURRENCY = max(1, env_int("MAINTENANCE_CONCURRENCY", 4))
# The job runner's heartbeat: a running job whose lease is this old lost its
# worker; the drain resumes it, up to MAINTENANCE_MAX_ATTEMPTS runs in all.
MAINTENANCE_LEASE_SECONDS = float(os.environ.get("MAINTENANCE_LEASE_SECONDS", "60"))
MAINTENANCE_MAX_ATTEMPTS = env_int("MAINTENANCE_MAX_ATTEMPTS", 3)
# Seconds a maintenance job waits before each move (a slow hypervisor, for demos and fault tests).
MAINTENANCE_SIMULATED_DELAY = float(os.environ.get("MAINTENANCE_SIMULATED_DELAY", "0"))
# Nova's [DEFAULT] enable_new_services: when false a newly registering host's
# compute service comes up disabled ("New service disabled due to config option.").
ENABLE_NEW_SERVICES = env_bool("ENABLE_NEW_SERVICES", True)
# Corral's: a host disabled that way is enabled when it joins its first aggregate.
ENABLE_HOSTS_ON_AGGREGATE_JOIN = env_bool("ENABLE_HOSTS_ON_AGGREGATE_JOIN", False)

# --- Health and metrics (aggregates.health, aggregates.metrics) --------------
# oslo.middleware's disable_by_file_path: while this file exists /healthcheck
# answers 503 "DISABLED BY FILE" (drain a node before a restart). Empty: never.
HEALTHCHECK_DISABLE_BY_FILE = os.environ.get("HEALTHCHECK_DISABLE_BY_FILE", "")
# Seconds each dependency check of /healthcheck may take (database connect, broker, placement).
HEALTHCHECK_TIMEOUT = float(os.environ.get("HEALTHCHECK_TIMEOUT", "2"))
# The file the beat process touches on every tick, and the age past which
# `manage.py liveness beat` says it is dead.
BEAT_HEARTBEAT_FILE = os.environ.get("BEAT_HEARTBEAT_FILE", "") or str(VAR_DIR / "beat-heartbeat")
BEAT_HEARTBEAT_MAX_AGE = float(os.environ.get("BEAT_HEARTBEAT_MAX_AGE", "60"))
# GET /metrics (Prometheus' text format): 404 unless enabled; then answered to
# these networks (comma-separated CIDRs) and to an admin token from anywhere.
METRICS_ENABLED = env_bool("METRICS_ENABLED", False)
METRICS_ALLOWED_NETWORKS = [
    network.strip()
    for network in os.environ.get("METRICS_ALLOWED_NETWORKS", "127.0.0.0/8,::1/128").split(",")
    if network.strip()
]
# prometheus-client's multiprocess mode: every gunicorn and Celery worker
# writes its counters here and a scrape sums them (empty: this process only).
PROMETHEUS_MULTIPROC_DIR = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "")
