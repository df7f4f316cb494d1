"""Typed readers for environment variables.

Each helper fails loudly with ImproperlyConfigured naming the variable, so a bad value stops
the program at start instead of surfacing later as a confusing error.
"""

import os
import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_secret(name: str, default: str = "") -> str:
    """A secret from NAME, or from the file named by NAME_FILE (docker/systemd style)."""
    path = os.environ.get(f"{name}_FILE")
    if path:
        try:
            with open(path, encoding="utf-8") as fh:
                return fh.read().strip()
        except OSError as exc:
            raise ImproperlyConfigured(f"{name}_FILE: cannot read {path!r}: {exc.strerror}") from exc
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false, 1/0, yes/no), got {raw!r}")


def env_int(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name} must be at most {maximum}, got {value}")
    return value


def env_regex(name: str, default: str, *, groups: tuple[str, ...] = ()) -> str:
    """A regular expression that must compile and define every one of `groups` as a named group."""
    raw = os.environ.get(name)
    value = default if raw is None or raw.strip() == "" else raw.strip()
    try:
        compiled = re.compile(value)
    except re.error as exc:
        raise ImproperlyConfigured(f"{name} is not a valid regular expression ({exc}), got {value!r}") from None
    missing = [g for g in groups if g not in compiled.groupindex]
    if missing:
        wanted = ", ".join(f"(?P<{g}>...)" for g in missing)
        raise ImproperlyConfigured(f"{name} must have the named groups {wanted}, got {value!r}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def env_times(name: str, default: str) -> list[tuple[int, int]]:
    """A comma-separated list of HH:MM clock times (e.g. shift starts), sorted, at least one."""
    raw = os.environ.get(name)
    text = default if raw is None or raw.strip() == "" else raw
    times = set()
    for item in text.split(","):
        hour, sep, minute = item.strip().partition(":")
        if not (sep and hour.isdigit() and minute.isdigit() and len(minute) == 2 and len(hour) <= 2
                and int(hour) < 24 and int(minute) < 60):
            raise ImproperlyConfigured(f"{name} must be comma-separated HH:MM times, got {text!r}")
        times.add((int(hour), int(minute)))
    return sorted(times)
def env_proxy_ssl_header(name: str) -> tuple[str, str] | None:
    """`X-Forwarded-Proto=https` -> ("HTTP_X_FORWARDED_PROTO", "https"), Django's SECURE_PROXY_SSL_HEADER."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    header, sep, value = raw.partition("=")
    header, value = header.strip(), value.strip()
    if not sep or not header or not value or not all(c.isascii() and (c.isalnum() or c == "-") for c in header):
        raise ImproperlyConfigured(f"{name} must look like X-Forwarded-Proto=https, got {raw!r}")
    return "HTTP_" + header.upper().replace("-", "_"), value


@dataclass(frozen=True)
class PostgresUrl:
    name: str
    user: str
    password: str
    host: str
    port: str
    options: dict[str, str]

    def django_database(self) -> dict:
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": self.name,
            "USER": self.user,
            "PASSWORD": self.password,
            "HOST": self.host,
            "PORT": self.port,
            "OPTIONS": dict(self.options),
        }


def parse_database_url(name: str, url: str) -> PostgresUrl:
    """postgresql://user:password@host:port/dbname?host=/socket/dir&sslmode=... ."""
    try:
        parts = urlsplit(url)
        port = parts.port  # raises ValueError on a non-numeric port
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} is not a valid URL: {exc}") from None
    if parts.scheme not in {"postgres", "postgresql"}:
        raise ImproperlyConfigured(
            f"{name} must start with postgresql:// (only PostgreSQL is supported), got scheme {parts.scheme!r}"
        )
    db_name = unquote(parts.path.lstrip("/"))
    if not db_name:
        raise ImproperlyConfigured(f"{name} must name a database, e.g. postgresql://user@host:5432/tidy")
    options = dict(parse_qsl(parts.query))
    host = options.pop("host", None) or unquote(parts.hostname or "")
    if not host:
        raise ImproperlyConfigured(f"{name} must name a host (or ?host=/socket/dir)")
    return PostgresUrl(
        name=db_name,
        user=unquote(parts.username or ""),
        password=unquote(parts.password or ""),
        host=host,
        port=str(port or ""),
        options=options,
    )


def env_choice(name: str, default: str, *, choices) -> str:
    """One of a fixed set of words (compared without regard to case); anything else stops the program."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    for choice in choices:
        if raw.strip().lower() == choice.lower():
            return choice
    raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}, got {raw!r}")


def env_semicolon_list(name: str) -> list[str]:
    """`;`-separated values (group names or DNs, which contain commas themselves), blanks dropped."""
    return [item.strip() for item in os.environ.get(name, "").split(";") if item.strip()]
# A schema of the console's own: a plain lower-case PostgreSQL name, never one of the WMS's or the
# server's own.
_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_NOT_THE_CONSOLES = {"public", "alg", "information_schema"}


def env_schema_name(name: str, default: str) -> str:
    """The name of a schema the console may own; a bad one stops the program, naming the variable."""
    raw = os.environ.get(name, "").strip() or default
    if not _SCHEMA_NAME.fullmatch(raw):
        raise ImproperlyConfigured(
            f"{name} must be a lower-case PostgreSQL name (letters, digits and _, at most 63, not starting with a "
            f"digit), got {raw!r}")
    if raw in _NOT_THE_CONSOLES or raw.startswith("pg_"):
        raise ImproperlyConfigured(
            f"{name} must name a schema of the console's own, not {raw!r} (the WMS's tables or the server's "
            f"catalogue live there)")
    return raw


# --- which process a database connection belongs to (pg_stat_activity.application_name) ---------

WEB, QCLUSTER, CLI = "tidy-web", "tidy-qcluster", "tidy-cli"
# manage.py commands that are a process kind of their own; every other command is tidy-cli.
_COMMAND_KINDS = {"runserver": WEB, "qcluster": QCLUSTER}


def process_application_name(argv: list[str]) -> str:
    """tidy-web under gunicorn (and runserver), tidy-qcluster for `manage.py qcluster` (its workers
    are forked from it), tidy-cli for every other command, script or test run. The lease connection
    names itself tidy-recovery-lease (recovery.runtime.lease)."""
    path = os.path.normpath(argv[0]).split(os.sep) if argv else [""]
    program = path[-1]
    if "gunicorn" in path:  # the gunicorn script, or python -m gunicorn (.../gunicorn/__main__.py)
        return WEB
    if program == "manage.py" and len(argv) > 1:
        return _COMMAND_KINDS.get(argv[1], CLI)
    return CLI


def database_url_names_application(options: dict[str, str]) -> bool:
    """Whether DATABASE_URL already names the connection (?application_name=..., or
    ?options=-c application_name=...): then that name is kept."""
    return "application_name" in options or "application_name=" in options.get("options", "")
