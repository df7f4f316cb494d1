"""Settings for the Tidy Recovery Console, read from the environment.

Defaults let a fresh clone run (embedded PostgreSQL, DEBUG on, a development secret);
production differs only by environment variables, documented in .env.example.
"""

import os
import sys
from datetime import timedelta
from pathlib import Path

from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from console import devdb
from console.env import (
    database_url_names_application,
    env_bool,
    env_choice,
    env_int,
    env_list,
    env_proxy_ssl_header,
    env_regex,
    env_schema_name,
    env_secret,
    env_semicolon_list,
    env_str,
    env_times,
    parse_database_url,
    process_application_name,
)
from console.identity import config as identity_config
from console.notifications.channels.config import load_channels
from recovery.logs.logcontext import LOG_FORMATS, default_log_format, logging_config

BASE_DIR = Path(__file__).resolve().parent.parent

# Validate plain values before anything starts, so a bad one stops the program at once.
DATABASE_URL = env_str("DATABASE_URL")
EMBEDDED_DATABASE = not DATABASE_URL
if DATABASE_URL:
    parse_database_url("DATABASE_URL", DATABASE_URL)
DEBUG = env_bool("DEBUG", EMBEDDED_DATABASE)
# --- recovery -------------------------------------------------------------------------------
# apply: recovery changes what the evidence proves. observe: a cycle decides and journals each
# decision it would make (marked observed) and changes no WMS table, takes no row lock and pauses
# nothing, so a site can read /recovery/observe/ before it lets recovery act (docs/architecture.md
# §16). The web servers and every qcluster read the same value (the banner shows it).
RECOVERY_MODE = env_choice("RECOVERY_MODE", "apply", choices=("apply", "observe"))
RECOVERY_INTERVAL_SECONDS = env_int("RECOVERY_INTERVAL_SECONDS", 10, minimum=1, maximum=60)
# The console warns when the last successful cycle is older than this many intervals.
RECOVERY_STALE_AFTER_INTERVALS = env_int("RECOVERY_STALE_AFTER_INTERVALS", 3, minimum=1)
# The recovery lease connection gives up on a database that does not answer a connection
# attempt after this many seconds, and on a dropped network (keepalives, tcp_user_timeout) after
# about this many seconds, so the lease is never held by a dead connection for long.
RECOVERY_LEASE_CONNECT_TIMEOUT_SECONDS = env_int("RECOVERY_LEASE_CONNECT_TIMEOUT_SECONDS", 5, minimum=1, maximum=60)
RECOVERY_LEASE_TCP_TIMEOUT_SECONDS = env_int("RECOVERY_LEASE_TCP_TIMEOUT_SECONDS", 30, minimum=9, maximum=600)
# The active set is split into this many shards (workflow_id % RECOVERY_SHARDS), each with its
# own lease, so several qclusters classify and decide concurrently (docs/architecture.md,
# "Recovery leases and shards"). Every node must use the same value.
RECOVERY_SHARDS = env_int("RECOVERY_SHARDS", 1, minimum=1, maximum=256)
# A cycle's budget: it applies at most this many decisions and stops starting new ones after
# this many seconds; the rest (oldest first) waits for the next cycle and is recorded as the
# cycle's backlog, so a restart with a large backlog drains in short cycles instead of one long one.
RECOVERY_CYCLE_MAX_DECISIONS = env_int("RECOVERY_CYCLE_MAX_DECISIONS", 5000, minimum=1)
RECOVERY_CYCLE_MAX_SECONDS = env_int("RECOVERY_CYCLE_MAX_SECONDS", 5, minimum=1, maximum=60)
# Connections a cycle applies its decisions on at once (16 decisions or more; fewer go on the
# cycle's own connection). Each is still one short transaction per workflow (docs/architecture.md
# §7); count them in the database's connection budget: one runner per shard can hold this many.
RECOVERY_APPLY_WORKERS = env_int("RECOVERY_APPLY_WORKERS", 4, minimum=1, maximum=16)

# Development secrets exist only on the embedded database; DEBUG never picks a secret
# (docs/operations.md, "Security").
SECRET_KEY = env_secret("SECRET_KEY")
if not SECRET_KEY:
    if not EMBEDDED_DATABASE:
        raise ImproperlyConfigured("SECRET_KEY must be set when DATABASE_URL is set (or SECRET_KEY_FILE)")
    SECRET_KEY = "development-only-secret-not-for-production"
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

# --- security (docs/operations.md, "Security") --------------------------------------------
# Secure by default whenever the database is configured; each setting has its own variable.
# The embedded (development) database is served over plain http on a developer's machine.
SECURE_BY_DEFAULT = not EMBEDDED_DATABASE
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", SECURE_BY_DEFAULT)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", SECURE_BY_DEFAULT)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", SECURE_BY_DEFAULT)
# Probes and scrapers talk plain http inside the cluster: never redirect them.
SECURE_REDIRECT_EXEMPT = [r"^health$", r"^health/live$", r"^health/ready$", r"^metrics$"]
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000 if SECURE_BY_DEFAULT else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", SECURE_BY_DEFAULT)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", SECURE_BY_DEFAULT)
# Set only when a TLS proxy in front strips or sets this header itself, e.g. X-Forwarded-Proto=https.
SECURE_PROXY_SSL_HEADER = env_proxy_ssl_header("SECURE_PROXY_SSL_HEADER")
SESSION_COOKIE_HTTPONLY = True
# Shared floor terminals (console/security/terminals.py): a session ends SESSION_IDLE_MINUTES
# (about a shift) after its person's last request, a live refresh not counted, and its cookie
# when the browser closes; signed-in answers are never cached. The language cookie is Secure
# (on a configured database) and SameSite like the session cookie, and no script reads it.
SESSION_IDLE_MINUTES = env_int("SESSION_IDLE_MINUTES", 480, minimum=5, maximum=7 * 24 * 60)
SESSION_COOKIE_AGE = SESSION_IDLE_MINUTES * 60
SESSION_EXPIRE_AT_BROWSER_CLOSE = True
LANGUAGE_COOKIE_SECURE = env_bool("LANGUAGE_COOKIE_SECURE", SECURE_BY_DEFAULT)
LANGUAGE_COOKIE_SAMESITE = "Lax"
LANGUAGE_COOKIE_HTTPONLY = True
# Error reports (the DEBUG page included) hide DATABASE_URL and webhook URLs as well as Django's
# usual secret-looking names.
DEFAULT_EXCEPTION_REPORTER_FILTER = "console.security.error_reports.ConsoleExceptionReporterFilter"

# Content Security Policy on every page: only our own scripts and styles, no inline code and no
# eval (htmx is configured for this in templates/base.html).
_CSP = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:"],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}
if csp_report_uri := env_str("CSP_REPORT_URI"):
    _CSP["DIRECTIVES"]["report-uri"] = [csp_report_uri]
# Signing out of the console continues at the OpenID provider (RP-initiated logout): the sign-out
# form's redirect goes there, which form-action must allow.
if _oidc_origin := identity_config.origin(env_str("OIDC_ISSUER").strip()):
    _CSP["DIRECTIVES"]["form-action"].append(_oidc_origin)
if env_bool("CSP_REPORT_ONLY", False):
    CONTENT_SECURITY_POLICY_REPORT_ONLY = _CSP
else:
    CONTENT_SECURITY_POLICY = _CSP

# Sign-in throttling (django-axes, attempts kept in PostgreSQL so every worker and node agrees):
# AXES_FAILURE_LIMIT failed sign-ins for one username within the cool-off lock that username
# for the cool-off, whatever the password and wherever they come from.
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("AXES_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = ["username"]
# axes.W006 asks for the IP address in the lock key; the key is the user name on purpose: floor
# terminals share addresses behind the warehouse proxy, and guessing one account's password is
# what the lock stops, from however many addresses.
SILENCED_SYSTEM_CHECKS = ["axes.W006"]
AXES_RESET_ON_SUCCESS = True
AXES_ENABLE_ACCESS_FAILURE_LOG = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_VERBOSE = False
# A sign-in that the directory did not answer is no failed password: it does not count (design §14).
AXES_WHITELIST_CALLABLE = "console.identity.backends.directory_did_not_answer"
AUTHENTICATION_BACKENDS = [
    "console.security.throttling.SignInThrottleBackend",
    # LDAP / Active Directory passwords (design §14): answers nothing while LDAP_SERVER_URI is unset,
    # and imports the directory libraries only when it is set.
    "console.identity.backends.DirectoryPasswordBackend",
    # Accounts signed in through OpenID Connect (the callback signs them in; it checks no password).
    "console.identity.backends.OpenIDConnectBackend",
    # Local passwords: everyone, or with LOCAL_SIGN_IN=false superusers only (break-glass, audited).
    "console.identity.backends.LocalPasswordBackend",
]

# --- identity: the site's directory decides who may repair (design §14; docs/operations.md
# "Identity and sign-in"). Each source is on when its first variable is set; both may be on.
LOCAL_SIGN_IN = env_bool("LOCAL_SIGN_IN", True)
# A directory (or OpenID provider) that does not answer within this many seconds is named
# unreachable on the sign-in page; local break-glass accounts still sign in.
DIRECTORY_TIMEOUT_SECONDS = env_int("DIRECTORY_TIMEOUT_SECONDS", 5, minimum=1, maximum=60)
OIDC_ISSUER = env_str("OIDC_ISSUER").strip()
OIDC_CLIENT_ID = env_str("OIDC_CLIENT_ID").strip()
OIDC_CLIENT_SECRET = env_secret("OIDC_CLIENT_SECRET")
OIDC_SCOPES = env_str("OIDC_SCOPES", "openid profile email").strip()
OIDC_USERNAME_CLAIM = env_str("OIDC_USERNAME_CLAIM", "preferred_username").strip()
OIDC_GROUPS_CLAIM = env_str("OIDC_GROUPS_CLAIM", "groups").strip()
OIDC_DISPLAY_NAME = env_str("OIDC_DISPLAY_NAME", "Single sign-on").strip()
OIDC_TOKEN_AUTH_METHOD = env_choice("OIDC_TOKEN_AUTH_METHOD", "client_secret_basic",
                                    choices=("client_secret_basic", "client_secret_post"))
LDAP_SERVER_URI = env_str("LDAP_SERVER_URI").strip()
LDAP_BIND_DN = env_str("LDAP_BIND_DN").strip()
LDAP_BIND_PASSWORD = env_secret("LDAP_BIND_PASSWORD")
LDAP_USER_SEARCH_BASE = env_str("LDAP_USER_SEARCH_BASE").strip()
LDAP_USER_FILTER = env_str("LDAP_USER_FILTER", "(uid=%(user)s)").strip()
LDAP_GROUP_SEARCH_BASE = env_str("LDAP_GROUP_SEARCH_BASE").strip()
LDAP_GROUP_TYPE = env_choice("LDAP_GROUP_TYPE", "groupOfNames",
                             choices=("groupOfNames", "posixGroup", "activeDirectory"))
LDAP_START_TLS = env_bool("LDAP_START_TLS", identity_config.ldap_start_tls_default(LDAP_SERVER_URI))
# Console roles from directory groups: `;`-separated group names (OIDC claim values) or group DNs (LDAP).
ROLE_GROUPS_SUPERVISOR = env_semicolon_list("ROLE_GROUPS_SUPERVISOR")
ROLE_GROUPS_OPERATOR = env_semicolon_list("ROLE_GROUPS_OPERATOR")
ROLE_GROUPS_SHIFT_LEAD = env_semicolon_list("ROLE_GROUPS_SHIFT_LEAD")
if _identity_problems := identity_config.identity_problems(globals()):
    raise ImproperlyConfigured("; ".join(_identity_problems))
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
     "OPTIONS": {"min_length": env_int("PASSWORD_MIN_LENGTH", 12, minimum=8)}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

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
# The console's own tables (Django's, django-q2's, recovery_*, console_*) live in this schema,
# never in `public` beside the WMS's tables, which every statement names with their schema. The
# schema is reached through the role's search_path in this database (`<schema>, public`), which
# `migrate` and `manage.py db_roles` set: no libpq startup option and no session SET, so PgBouncer in
# transaction mode serves it as is (console/database/schema.py, docs/operations.md).
CONSOLE_DB_SCHEMA = env_schema_name("CONSOLE_DB_SCHEMA", "tidy_console")
# Every connection says which process it is (pg_stat_activity.application_name): tidy-web,
# tidy-qcluster or tidy-cli here, tidy-recovery-lease on the lease connection. One given in
# DATABASE_URL (?application_name=... or options=-c application_name=...) wins.
if not database_url_names_application(DATABASES["default"]["OPTIONS"]):
    DATABASES["default"]["OPTIONS"]["application_name"] = process_application_name(sys.argv)
# Page and /metrics reads run under this statement timeout (SET LOCAL in the request's
# transaction); a page that hits it answers 503 naming it. Recovery, callbacks and repairs are not
# bound by it (console/database/timeouts.py).
CONSOLE_STATEMENT_TIMEOUT_MS = env_int("CONSOLE_STATEMENT_TIMEOUT_MS", 5000, minimum=100, maximum=600_000)
# DATABASE_REPLICA_URL (or _FILE): a streaming replica of that database. The read-only pages and
# /metrics read from it, everything else from the primary (design §16, console/replica/); unset,
# everything reads the primary. Kept out of the settings by name: it may hold a password.
replica_url = env_secret("DATABASE_REPLICA_URL")
if replica_url:
    DATABASES["replica"] = parse_database_url("DATABASE_REPLICA_URL", replica_url).django_database()
    DATABASES["replica"]["CONN_MAX_AGE"] = DATABASES["default"]["CONN_MAX_AGE"]
    DATABASES["replica"]["CONN_HEALTH_CHECKS"] = True
    # A replica that does not answer costs a request at most this long before the primary serves it.
    DATABASES["replica"]["OPTIONS"].setdefault("connect_timeout", "2")
    # The replica's connections say which process they are too.
    if not database_url_names_application(DATABASES["replica"]["OPTIONS"]):
        DATABASES["replica"]["OPTIONS"]["application_name"] = DATABASES["default"]["OPTIONS"].get("application_name")
    # The test database is the primary's own, copied by the replication itself.
    DATABASES["replica"]["TEST"] = {"MIRROR": "default"}
del replica_url
DATABASE_ROUTERS = ["console.replica.router.ReplicaRouter"]
# Lag beyond which the read-only pages read the primary again (and say so).
REPLICA_MAX_LAG_SECONDS = env_int("REPLICA_MAX_LAG_SECONDS", 30, minimum=1)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- WCS ------------------------------------------------------------------------------------
WCS_CALLBACK_TOKEN = env_secret("WCS_CALLBACK_TOKEN", "dev-wcs-token" if EMBEDDED_DATABASE else "")
# A configured database means a real WCS: an unset or guessable token would only show up as
# refused callbacks, so start-up refuses it.
WCS_CALLBACK_TOKEN_MIN_LENGTH = 24
if not EMBEDDED_DATABASE and len(WCS_CALLBACK_TOKEN) < WCS_CALLBACK_TOKEN_MIN_LENGTH:
    raise ImproperlyConfigured(
        f"WCS_CALLBACK_TOKEN (or WCS_CALLBACK_TOKEN_FILE) must be set to at least "
        f"{WCS_CALLBACK_TOKEN_MIN_LENGTH} characters when DATABASE_URL is set; got {len(WCS_CALLBACK_TOKEN)}"
    )
WCS_SNAPSHOT_URL = env_str("WCS_SNAPSHOT_URL", "http://127.0.0.1:8765/wcs/vehicle-snapshot")
WCS_SNAPSHOT_TIMEOUT_MS = env_int("WCS_SNAPSHOT_TIMEOUT_MS", 1500, minimum=1)
# How long a WCS callback waits for a workflow row another transaction holds before it answers
# 503 (retry) instead of hanging.
WCS_CALLBACK_LOCK_TIMEOUT_MS = env_int("WCS_CALLBACK_LOCK_TIMEOUT_MS", 5000, minimum=1)

# --- console --------------------------------------------------------------------------------
# Seconds between live refreshes of the console's lists and health panels.
CONSOLE_REFRESH_SECONDS = env_int("CONSOLE_REFRESH_SECONDS", 10, minimum=2, maximum=300)
# An ACTIVE workflow whose current job (status 1-3) has not changed for this long is stalled.
STALLED_AFTER_MINUTES = env_int("STALLED_AFTER_MINUTES", 15, minimum=1, maximum=7 * 24 * 60)
# Shift start times (warehouse time): the handover page's shift boundaries.
SHIFT_STARTS = env_times("SHIFT_STARTS", "06:00,14:00,22:00")
# Rows each section of the handover page shows (the newest of the shift); the rest are one link
# away, and the CSV is complete.
HANDOVER_SECTION_ROWS = env_int("HANDOVER_SECTION_ROWS", 50, minimum=5, maximum=1000)
# Notes one person may add in any 60 minutes; one more is answered 429 and nothing is stored.
NOTES_PER_USER_PER_HOUR = env_int("NOTES_PER_USER_PER_HOUR", 60, minimum=1, maximum=10_000)
# Cordons and silences one shift lead may create in any 60 minutes (console.rate_limits, as notes).
CORDONS_PER_USER_PER_HOUR = env_int("CORDONS_PER_USER_PER_HOUR", 30, minimum=1, maximum=10_000)
SILENCES_PER_USER_PER_HOUR = env_int("SILENCES_PER_USER_PER_HOUR", 30, minimum=1, maximum=10_000)

# --- notifications (console/notifications; docs/user-guide.md "Notifications") -------------------------
# An unacknowledged notification escalates to shift leads after this long.
ESCALATE_AFTER_MINUTES = env_int("ESCALATE_AFTER_MINUTES", 30, minimum=1)
# The analytics page's figures are recomputed off the request path this often (schedule
# tidy-analytics); the page reads the newest snapshot.
ANALYTICS_REFRESH_MINUTES = env_int("ANALYTICS_REFRESH_MINUTES", 10, minimum=1, maximum=1440)
NOTIFY_EMAIL_TO = env_list("NOTIFY_EMAIL_TO", [])
NOTIFY_ESCALATE_EMAIL_TO = env_list("NOTIFY_ESCALATE_EMAIL_TO", [])
NOTIFY_WEBHOOK_URL = env_str("NOTIFY_WEBHOOK_URL")
if NOTIFY_WEBHOOK_URL and not NOTIFY_WEBHOOK_URL.startswith(("http://", "https://")):
    raise ImproperlyConfigured(f"NOTIFY_WEBHOOK_URL must start with http:// or https://, got {NOTIFY_WEBHOOK_URL!r}")
NOTIFY_WEBHOOK_TIMEOUT_MS = env_int("NOTIFY_WEBHOOK_TIMEOUT_MS", 5000, minimum=100, maximum=30000)
# Paused-too-long threshold for a reason code a shift lead has not set in the console.
NOTIFY_PAUSED_TOO_LONG_MINUTES = env_int("NOTIFY_PAUSED_TOO_LONG_MINUTES", 30, minimum=1)
NOTIFY_PROPOSAL_WAITING_MINUTES = env_int("NOTIFY_PROPOSAL_WAITING_MINUTES", 10, minimum=1)
NOTIFY_BACKLOG_WINDOW_MINUTES = env_int("NOTIFY_BACKLOG_WINDOW_MINUTES", 15, minimum=1, maximum=60)
# A group's first message (paused, paused too long, stalled per reason and aisle) waits this long
# after its first member, so a burst goes out as one message (docs/architecture.md §12).
NOTIFY_GROUP_WAIT_SECONDS = env_int("NOTIFY_GROUP_WAIT_SECONDS", 30, minimum=0, maximum=3600)
# Failed deliveries are retried after base, 2 x base, 4 x base ... seconds, never more than max.
NOTIFY_RETRY_BASE_SECONDS = env_int("NOTIFY_RETRY_BASE_SECONDS", 30, minimum=1)
NOTIFY_RETRY_MAX_SECONDS = env_int("NOTIFY_RETRY_MAX_SECONDS", 1800, minimum=1)
# The console's address as the people notified reach it (links in e-mails and webhooks).
CONSOLE_BASE_URL = env_str("CONSOLE_BASE_URL", "http://127.0.0.1:8000").rstrip("/")
# Outgoing mail (Django's EMAIL_* settings). EMAIL_HOST_PASSWORD_FILE works too.
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25, minimum=1, maximum=65535)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_secret("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10, minimum=1)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "tidy-console@localhost")

# How a cargo space code splits into aisle, level and position for the rack map (/map/); codes
# that do not match are listed beside the map.
SPACE_CODE_PATTERN = env_regex("SPACE_CODE_PATTERN", r"^(?P<aisle>[A-Z]\d+)-(?P<level>\d+)-(?P<position>\d+)$",
                               groups=("aisle", "level", "position"))

# --- time -----------------------------------------------------------------------------------
TIME_ZONE = env_str("WAREHOUSE_TIME_ZONE", "UTC")
USE_TZ = True

# --- languages ------------------------------------------------------------------------------
# Each person picks a language in the menu (Django's language cookie, and the session once signed
# in); otherwise the browser's Accept-Language; otherwise LANGUAGE_CODE. Reason codes, ids and
# codes are never translated. Compiled catalogues (.mo) are committed: no gettext tools needed.
USE_I18N = True
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LANGUAGE_CODE = env_choice("LANGUAGE_CODE", "en", choices=[code for code, _ in LANGUAGES])
# The language of what leaves the building: notification e-mails and the webhook's text fields
# (docs/user-guide.md "Notifications"). Its codes, keys and ids are the same in every language.
NOTIFY_LANGUAGE = env_choice("NOTIFY_LANGUAGE", LANGUAGE_CODE, choices=[code for code, _ in LANGUAGES])
# Chat channels (WeCom, DingTalk, Feishu, Slack, Teams, webhooks; docs/operations.md "Chat
# channels"): a TOML file of [[channel]] tables, checked here: a bad one stops start-up naming the
# channel and the field. Its secrets (robot URLs, signing secrets) stay in NOTIFY_CHANNELS only.
NOTIFY_CHANNELS_FILE = env_str("NOTIFY_CHANNELS_FILE").strip()
NOTIFY_CHANNELS = load_channels(NOTIFY_CHANNELS_FILE, languages=[code for code, _ in LANGUAGES],
                                default_language=LANGUAGE_CODE)
# The length of a vendor's "minute" in the channels' rate limits (20 a minute ...): 60. Only tests
# shorten it, to see a burst wait for the next window without waiting a minute.
NOTIFY_CHANNEL_MINUTE_SECONDS = env_int("NOTIFY_CHANNEL_MINUTE_SECONDS", 60, minimum=1, maximum=60)
# "Send a test message" on /notifications/channels/: how many one shift lead may ask for in 60 minutes.
CHANNEL_TESTS_PER_USER_PER_HOUR = env_int("CHANNEL_TESTS_PER_USER_PER_HOUR", 20, minimum=1, maximum=1000)
LOCALE_PATHS = [BASE_DIR / "locale"]

# --- application ----------------------------------------------------------------------------
INSTALLED_APPS = [
    "console.apps.ConsoleAdminConfig",  # django.contrib.admin, superusers only
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "django_q",
    "axes",
    "csp",
    "recovery",
    "console",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # The WCS API (/api/wcs/) stops here: what follows serves people, not a machine client
    # with a bearer token (docs/architecture.md §8).
    "console.api.middleware.ApiShortPathMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # After sessions (a signed-in person's choice), before common (language-aware redirects).
    "django.middleware.locale.LocaleMiddleware",
    "console.languages.SessionLanguageMiddleware",  # a signed-in person's choice, kept on the session
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # After sign-in: which database the request's reads use (the read replica's pages, design §16).
    "console.replica.middleware.ReplicaMiddleware",
    # After sign-in and htmx: no-store on signed-in answers, the idle timeout's activity.
    "console.security.terminals.SharedTerminalMiddleware",
    # Last, as django-axes asks: turns a refused (locked) sign-in into the lockout page.
    "axes.middleware.AxesMiddleware",
    # Innermost: a page's or /metrics' reads in one transaction under CONSOLE_STATEMENT_TIMEOUT_MS,
    # a 503 naming it when one runs longer (never around the session's save or the sign-in log).
    "console.database.timeouts.StatementTimeoutMiddleware",
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
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "console.pages.recovery_mode",  # the observe-mode banner
                "console.frame.frame",  # the header's roles and navigation, on every page
            ],
        },
    },
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))  # filled by `manage.py release`
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        # Hashed names (long cache lifetimes) need `manage.py release` (collectstatic) first;
        # STATIC_MANIFEST=false serves the plain names from the finders instead.
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if env_bool("STATIC_MANIFEST", not DEBUG)
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
WHITENOISE_USE_FINDERS = True

# --- django-q2 ------------------------------------------------------------------------------
# A runner task lives at most RECOVERY_RUNNER_SECONDS; keep retry > timeout > a runner's life
# (docs/architecture.md §7) so a running task is never redelivered while it still runs.
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

# --- operations: health, metrics, logs, cache, retention (docs/operations.md "Monitoring") ---
# /metrics answers only with `Authorization: Bearer <METRICS_TOKEN>` when it is set. On a
# configured database it stays closed (401) until one is set, and a token that is set must be
# long enough (checked at the end of this file); the embedded development database leaves it open.
METRICS_TOKEN = env_secret("METRICS_TOKEN")
METRICS_TOKEN_MIN_LENGTH = 24
# An ACTIVE workflow whose current job has not changed for this long is "stalled".
STALLED_AFTER_MINUTES = env_int("STALLED_AFTER_MINUTES", 15, minimum=1)
# Journal rows (recovery cycles and decisions, callback receipts, outbound requests) older than
# this are deleted by the retention task; the repair audit is never deleted.
JOURNAL_RETENTION_DAYS = env_int("JOURNAL_RETENTION_DAYS", 90, minimum=1)
# One cache for every process (web workers, qclusters): django-q2's qinfo/qmonitor read the
# cluster's statistics from it. The table is made by `manage.py release` and a migration.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": env_str("CACHE_TABLE", "tidy_cache"),
    }
}
LOG_FORMAT = env_choice("LOG_FORMAT", default_log_format(debug=DEBUG), choices=LOG_FORMATS)
LOG_LEVEL = env_choice("LOG_LEVEL", "INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"))
MIDDLEWARE.insert(0, "console.request_id.RequestIdMiddleware")
# Django configures logging from this dict; deploy/gunicorn.conf.py uses the same one.
LOGGING = logging_config(log_format=LOG_FORMAT, level=LOG_LEVEL)
if LOG_FORMAT == "json":
    import logging as _logging

    _logging.captureWarnings(True)  # a Python warning becomes a JSON line, not plain stderr text

# --- refusals that need every value above (docs/operations.md "Security") ---------------------------------
# Last, so a plain bad value is named first. A configured database is production until someone
# says otherwise: /metrics shows the warehouse's state to whoever asks, so it needs a token, and
# the DEBUG page shows code, settings and request data to whoever triggers an error.
ALLOW_DEBUG_ON_CONFIGURED_DATABASE = env_bool("ALLOW_DEBUG_ON_CONFIGURED_DATABASE", False)
if not EMBEDDED_DATABASE:
    if METRICS_TOKEN and len(METRICS_TOKEN) < METRICS_TOKEN_MIN_LENGTH:
        raise ImproperlyConfigured(
            f"METRICS_TOKEN (or METRICS_TOKEN_FILE) must be at least {METRICS_TOKEN_MIN_LENGTH} characters "
            f"when DATABASE_URL is set (Prometheus sends it as a bearer token); got {len(METRICS_TOKEN)}"
        )
    if DEBUG and not ALLOW_DEBUG_ON_CONFIGURED_DATABASE:
        raise ImproperlyConfigured(
            "DEBUG=true is refused when DATABASE_URL is set: the debug page shows settings, code and request "
            "data to anyone who causes an error. Set ALLOW_DEBUG_ON_CONFIGURED_DATABASE=true to allow it on a "
            "test installation."
        )
