"""Secure by default on a configured database: start-up refusals, HTTPS settings, the Content
Security Policy and `check --deploy`, checked in subprocesses with production environments."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import override_settings

from console.management.demo import DemoUsersRefused, ensure_demo_users

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION_SECRET = "k3-Jq9v!pX2r#L7m@Wc5zT8n$Hd4sF6g^Yb1eQ0u&Ai9oR2wE7tZ"
TOKEN = "wcs-token-" + "7" * 20
METRICS_TOKEN = "metrics-token-" + "8" * 20


def _test_database_url() -> str:
    """The URL of the database these tests run on (embedded or configured)."""
    base = os.environ.get("DATABASE_URL") or os.environ["EMBEDDED_DATABASE_URL"]
    parts = urlsplit(base)
    return urlunsplit(parts._replace(path="/" + connection.settings_dict["NAME"]))


def _run(code_or_args, env: dict, *, python_code: bool = False) -> subprocess.CompletedProcess:
    """manage.py (or a Python snippet) with ONLY the given variables, as a fresh deployment has."""
    clean = {"PATH": os.environ["PATH"], "DJANGO_SETTINGS_MODULE": "console.settings", **env}
    args = ["-c", code_or_args] if python_code else ["manage.py", *code_or_args]
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120)


def production_env(**extra) -> dict:
    return {"DATABASE_URL": _test_database_url(), "SECRET_KEY": PRODUCTION_SECRET,
            "ALLOWED_HOSTS": "console.warehouse.example", "WCS_CALLBACK_TOKEN": TOKEN, "METRICS_TOKEN": METRICS_TOKEN,
            **extra}


SHOW_SETTINGS = """
import json, django
django.setup()
from django.conf import settings as s
names = ["DEBUG", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS",
         "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_HSTS_PRELOAD", "SECURE_PROXY_SSL_HEADER", "SECRET_KEY",
         "WCS_CALLBACK_TOKEN", "AXES_FAILURE_LIMIT", "AXES_LOCKOUT_PARAMETERS", "SECURE_REDIRECT_EXEMPT"]
out = {n: getattr(s, n) for n in names}
out["AXES_COOLOFF_SECONDS"] = s.AXES_COOLOFF_TIME.total_seconds()
out["CSP"] = getattr(s, "CONTENT_SECURITY_POLICY", None)
out["PASSWORD_VALIDATORS"] = len(s.AUTH_PASSWORD_VALIDATORS)
print(json.dumps(out, default=str))
"""


def _settings(env: dict) -> dict:
    result = _run(SHOW_SETTINGS, env, python_code=True)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.django_db
def test_it_passes_check_deploy_with_only_the_five_production_variables():
    result = _run(["check", "--deploy", "--fail-level", "WARNING"], production_env())
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


@pytest.mark.django_db
def test_without_a_metrics_token_a_configured_database_starts_and_keeps_metrics_closed():
    env = production_env()
    del env["METRICS_TOKEN"]
    result = _run(["check", "--deploy", "--fail-level", "WARNING"], env)
    assert result.returncode == 0, result.stdout + result.stderr
    scrape = _run(CLOSED_SCRAPE, env, python_code=True)
    assert scrape.returncode == 0, scrape.stderr
    assert scrape.stdout.split() == ["401", "401"]


CLOSED_SCRAPE = """
import django
django.setup()
from django.test import Client
c = Client(HTTP_HOST="console.warehouse.example")
empty = c.get("/metrics", secure=True, headers={"Authorization": "Bearer "})
print(c.get("/metrics", secure=True).status_code, empty.status_code)
"""


@pytest.mark.django_db
@pytest.mark.parametrize("variable,warning", [
    ("SECURE_SSL_REDIRECT", "security.W008"),
    ("SESSION_COOKIE_SECURE", "security.W012"),
    ("CSRF_COOKIE_SECURE", "security.W016"),
])
def test_check_deploy_fails_when_an_operator_turns_a_secure_default_off(variable, warning):
    result = _run(["check", "--deploy", "--fail-level", "WARNING"], production_env(**{variable: "false"}))
    assert result.returncode != 0
    assert warning in result.stderr


@pytest.mark.django_db
def test_it_is_secure_by_default_on_a_configured_database():
    values = _settings(production_env())
    assert values["DEBUG"] is False
    assert values["SESSION_COOKIE_SECURE"] and values["CSRF_COOKIE_SECURE"] and values["SECURE_SSL_REDIRECT"]
    assert values["SECURE_HSTS_SECONDS"] >= 365 * 24 * 3600
    assert values["SECURE_HSTS_INCLUDE_SUBDOMAINS"] and values["SECURE_HSTS_PRELOAD"]
    assert values["SECURE_PROXY_SSL_HEADER"] is None  # only when the environment says a proxy is in front
    assert {r"^health/live$", r"^health/ready$", r"^metrics$"} <= set(values["SECURE_REDIRECT_EXEMPT"])
    assert values["AXES_FAILURE_LIMIT"] == 5 and values["AXES_COOLOFF_SECONDS"] == 15 * 60
    assert values["AXES_LOCKOUT_PARAMETERS"] == ["username"]
    assert values["PASSWORD_VALIDATORS"] == 4
    assert "'unsafe-inline'" not in json.dumps(values["CSP"]) and "'unsafe-eval'" not in json.dumps(values["CSP"])


@pytest.mark.django_db
def test_each_secure_setting_has_its_own_variable():
    values = _settings(production_env(SESSION_COOKIE_SECURE="false", CSRF_COOKIE_SECURE="no", SECURE_SSL_REDIRECT="0",
                                      SECURE_HSTS_SECONDS="600", SECURE_HSTS_INCLUDE_SUBDOMAINS="false",
                                      SECURE_HSTS_PRELOAD="false", SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto=https",
                                      AXES_FAILURE_LIMIT="3", AXES_COOLOFF_MINUTES="30"))
    assert not (values["SESSION_COOKIE_SECURE"] or values["CSRF_COOKIE_SECURE"] or values["SECURE_SSL_REDIRECT"])
    assert values["SECURE_HSTS_SECONDS"] == 600
    assert not (values["SECURE_HSTS_INCLUDE_SUBDOMAINS"] or values["SECURE_HSTS_PRELOAD"])
    assert values["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert (values["AXES_FAILURE_LIMIT"], values["AXES_COOLOFF_SECONDS"]) == (3, 1800)


@pytest.mark.django_db
@pytest.mark.parametrize("env,message", [
    ({"WCS_CALLBACK_TOKEN": ""}, "WCS_CALLBACK_TOKEN"),
    ({"WCS_CALLBACK_TOKEN": "x" * 23}, "at least 24 characters"),
    ({"WCS_CALLBACK_TOKEN": "", "DEBUG": "true"}, "WCS_CALLBACK_TOKEN"),
    ({"SECRET_KEY": "", "DEBUG": "true"}, "SECRET_KEY must be set"),
    ({"SECURE_PROXY_SSL_HEADER": "https"}, "SECURE_PROXY_SSL_HEADER must look like"),
    ({"METRICS_TOKEN": "m" * 23}, "METRICS_TOKEN (or METRICS_TOKEN_FILE) must be at least 24 characters"),
    ({"DEBUG": "true"}, "DEBUG=true is refused when DATABASE_URL is set"),
    ({"DEBUG": "1", "ALLOW_DEBUG_ON_CONFIGURED_DATABASE": "false"}, "ALLOW_DEBUG_ON_CONFIGURED_DATABASE=true"),
])
def test_start_up_refuses_a_configured_database_without_real_secrets(env, message):
    result = _run(["check"], production_env(**env))
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert message in result.stderr


@pytest.mark.django_db
def test_debug_never_picks_a_secret():
    values = _settings(production_env(DEBUG="true", ALLOW_DEBUG_ON_CONFIGURED_DATABASE="true"))
    assert values["DEBUG"] is True
    assert values["SECRET_KEY"] == PRODUCTION_SECRET
    assert values["WCS_CALLBACK_TOKEN"] == TOKEN


@pytest.mark.django_db
def test_the_metrics_token_can_come_from_a_file(tmp_path):
    path = tmp_path / "metrics-token"
    path.write_text("from-a-file-" + "f" * 20 + "\n")
    env = production_env(METRICS_TOKEN_FILE=str(path))
    del env["METRICS_TOKEN"]
    result = _run(["shell", "-c", "from django.conf import settings; print(settings.METRICS_TOKEN)"], env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[-1] == "from-a-file-" + "f" * 20


PASSWORD = "hunter2-database-password"
ERROR_PAGE = f"""
import django, sys
django.setup()
from django.test import RequestFactory
from django.views.debug import ExceptionReporter
request = RequestFactory().get("/", DATABASE_URL="postgresql://tidy:{PASSWORD}@db.example/wms",
                               HTTP_AUTHORIZATION="Bearer metrics-secret")
try:
    raise RuntimeError("boom")
except RuntimeError:
    page = ExceptionReporter(request, *sys.exc_info()).get_traceback_html()
print("shown" if {PASSWORD!r} in page or "metrics-secret" in page else "hidden")
print("filtered" if "DATABASE_URL" in page else "absent")
"""


@pytest.mark.django_db
def test_the_debug_page_masks_the_database_url():
    """The DEBUG page (and the error e-mails, which use the same filter) shows DATABASE_URL masked,
    as a setting and in the request's environment. Django's own filter would show the password."""
    # Nothing connects to it: the page is rendered without a database.
    env = production_env(DEBUG="true", ALLOW_DEBUG_ON_CONFIGURED_DATABASE="true",
                         DATABASE_URL=f"postgresql://tidy:{PASSWORD}@db.example/wms")
    result = _run(ERROR_PAGE, env, python_code=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["hidden", "filtered"]
    plain = _run(ERROR_PAGE.replace("django.setup()", "django.setup()\nfrom django.conf import settings\n"
                                    "settings.DEFAULT_EXCEPTION_REPORTER_FILTER = "
                                    "'django.views.debug.SafeExceptionReporterFilter'"), env, python_code=True)
    assert plain.stdout.split()[0] == "shown"  # the test can tell: Django's default would show it


@pytest.mark.django_db
@override_settings(EMBEDDED_DATABASE=False)
def test_demo_users_are_never_created_on_a_configured_database():
    with pytest.raises(DemoUsersRefused, match="never created on a configured database"):
        ensure_demo_users()
    assert not User.objects.exists()


@pytest.mark.django_db
def test_demo_passwords_pass_the_password_validators():
    from django.contrib.auth.password_validation import validate_password

    from console.management.demo import DEMO_USERS

    for _role, username, password in DEMO_USERS:
        validate_password(password, User(username=username))


@pytest.mark.django_db
def test_every_page_carries_a_content_security_policy_without_inline_script(client):
    response = client.get("/accounts/login/")
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "style-src 'self'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert "frame-ancestors 'none'" in policy
    page = response.content.decode()
    assert '"includeIndicatorStyles": false' in page and '"allowEval": false' in page


@pytest.mark.django_db
@override_settings(SECURE_SSL_REDIRECT=True)
def test_https_redirect_spares_probes_and_honours_the_proxy_header(client):
    response = client.get("/accounts/login/")
    assert response.status_code == 301 and response["Location"].startswith("https://")
    for probe in ("/health", "/health/live", "/health/ready", "/metrics"):
        assert client.get(probe).status_code != 301, probe
    with override_settings(SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https")):
        assert client.get("/accounts/login/", headers={"X-Forwarded-Proto": "https"}).status_code == 200


# Inline script or style, on*= handlers, and what htmx would evaluate (a trigger filter in [...],
# hx-on, js: values): all refused by the Content Security Policy. The one exception is a <style>
# block carrying the response's own nonce, which its view adds to style-src for that response only
# (the case file, a document that must read the same saved or printed: tests/console/casefile/test_casefile.py checks
# the nonce against the header).
INLINE = re.compile(r"<script(?![^>]*\ssrc=)[^>]*>|<style\b(?!\s+nonce=\"\{\{ request\.csp_nonce \}\}\">)|\sstyle=|"
                    r"\son[a-z]+\s*=|hx-trigger=\"[^\"]*\[|\shx-on|\"\s*js:|\"\s*javascript:", re.IGNORECASE)


def test_no_template_served_by_the_console_has_inline_script_style_or_handlers():
    # replay/report.html is a file written to disk for a supervisor, never served by the console.
    offenders = []
    for path in sorted((ROOT / "templates").rglob("*.html")):
        if path.parts[-2] == "replay":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if INLINE.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert offenders == []
