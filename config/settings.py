"""Corral settings, read from environment variables.

Nothing set gives the embedded mode: a SQLite file under ``var/``, Celery
tasks run eagerly in the web process, and placement calls go to this same
server's ``/placement/``. README.md lists every variable.
"""
import os
from pathlib import Path

import dj_database_url

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CORRAL_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)


def env_bool(name, default=False):
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


def env_int(name, default):
    value = os.environ.get(name)
    return int(value) if value not in (None, "") else default


def _secret_key():
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
ALLOWED_HOSTS = [h.strip() for h in os.environ.get("ALLOWED_HOSTS", "*").split(",") if h.strip()]
CSRF_TRUSTED_ORIGINS = [
    o.strip() for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()
]

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
    "aggregates.api.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
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

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = []
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

# --- OpenStack-facing behaviour ------------------------------------------
# keystone: tokens issued by /identity/v3/auth/tokens. noauth2: test mode,
# "X-Auth-Token: admin" is an admin and any other token a plain user. UNSAFE.
AUTH_STRATEGY = os.environ.get("AUTH_STRATEGY", "keystone")
if AUTH_STRATEGY not in ("keystone", "noauth2"):
    raise RuntimeError("AUTH_STRATEGY must be 'keystone' or 'noauth2'")
TOKEN_EXPIRATION = env_int("TOKEN_EXPIRATION", 3600)
# Base URL used for the service catalog and links; built from each request when empty.
PUBLIC_URL = os.environ.get("PUBLIC_URL", "").rstrip("/")
REGION_NAME = os.environ.get("REGION_NAME", "RegionOne")
PLACEMENT_URL = os.environ.get("PLACEMENT_URL", "http://127.0.0.1:8000/placement")
DEFAULT_AVAILABILITY_ZONE = os.environ.get("DEFAULT_AVAILABILITY_ZONE", "nova")
INTERNAL_SERVICE_AVAILABILITY_ZONE = os.environ.get("INTERNAL_SERVICE_AVAILABILITY_ZONE", "internal")
SERVICE_DOWN_TIME = env_int("SERVICE_DOWN_TIME", 60)
# Which APIs this process serves: "all" (default) or "placement" (placement only, at /).
CORRAL_SERVICE = os.environ.get("CORRAL_SERVICE", "all")

REST_FRAMEWORK = {
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"django.request": {"level": "ERROR"}},
}

# Placement checks keystone-mode tokens through this callable (token, request_id)
# -> Caller or None, named here so that placement/ never imports aggregates/.
PLACEMENT_TOKEN_VALIDATOR = os.environ.get("PLACEMENT_TOKEN_VALIDATOR", "aggregates.identity.caller_for_token")

# --- Mirroring aggregates into placement ------------------------------------
# Token sent to placement. Empty: "admin" under noauth2, else a token that
# Corral issues itself for its service user (PLACEMENT_SERVICE_USER).
PLACEMENT_AUTH_TOKEN = os.environ.get("PLACEMENT_AUTH_TOKEN", "")
PLACEMENT_SERVICE_USER = os.environ.get("PLACEMENT_SERVICE_USER", "corral-placement")
PLACEMENT_CONNECT_TIMEOUT = float(os.environ.get("PLACEMENT_CONNECT_TIMEOUT", "3"))
PLACEMENT_READ_TIMEOUT = float(os.environ.get("PLACEMENT_READ_TIMEOUT", "30"))
# A mirror request that failed this many times is marked failed (the
# reconciler still repairs its association).
PLACEMENT_MIRROR_MAX_ATTEMPTS = env_int("PLACEMENT_MIRROR_MAX_ATTEMPTS", 12)
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
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
