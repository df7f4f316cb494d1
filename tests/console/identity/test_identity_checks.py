"""A half-configured sign-in source is refused at start-up and by the system checks (`check
--deploy` included), naming the variable (design §14); with no directory configured nothing of the
directory libraries is imported."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from console.identity.config import identity_problems, ldap_start_tls_default

ROOT = Path(__file__).resolve().parents[3]
COMPLETE_OIDC = {"OIDC_ISSUER": "https://sso.example.test/realms/wh", "OIDC_CLIENT_ID": "console",
                 "OIDC_CLIENT_SECRET": "s", "OIDC_SCOPES": "openid profile", "ROLE_GROUPS_SHIFT_LEAD": ["leads"]}
COMPLETE_LDAP = {"LDAP_SERVER_URI": "ldaps://dc1.example.test", "LDAP_USER_SEARCH_BASE": "ou=people,dc=example",
                 "LDAP_GROUP_SEARCH_BASE": "ou=groups,dc=example", "LDAP_USER_FILTER": "(sAMAccountName=%(user)s)",
                 "LDAP_BIND_DN": "cn=console,dc=example", "LDAP_BIND_PASSWORD": "p",
                 "ROLE_GROUPS_OPERATOR": ["cn=ops,ou=groups,dc=example"]}


def test_complete_sources_and_no_source_are_fine():
    assert identity_problems({}) == []
    assert identity_problems({"LOCAL_SIGN_IN": True}) == []
    assert identity_problems(COMPLETE_OIDC) == []
    assert identity_problems(COMPLETE_LDAP) == []
    assert identity_problems({**COMPLETE_OIDC, **COMPLETE_LDAP, "LOCAL_SIGN_IN": False}) == []


@pytest.mark.parametrize(("values", "named"), [
    ({**COMPLETE_OIDC, "OIDC_CLIENT_SECRET": ""}, "OIDC_CLIENT_SECRET (or OIDC_CLIENT_SECRET_FILE) must be set"),
    ({**COMPLETE_OIDC, "OIDC_ISSUER": ""}, "OIDC_ISSUER must be set when OIDC_CLIENT_ID is set"),
    ({**COMPLETE_OIDC, "OIDC_ISSUER": "http://sso.example.test"}, "OIDC_ISSUER must be an https:// address"),
    ({**COMPLETE_OIDC, "OIDC_SCOPES": "profile email"}, "OIDC_SCOPES must contain openid"),
    ({**COMPLETE_LDAP, "LDAP_USER_SEARCH_BASE": ""}, "LDAP_USER_SEARCH_BASE must be set"),
    ({**COMPLETE_LDAP, "LDAP_GROUP_SEARCH_BASE": ""}, "LDAP_GROUP_SEARCH_BASE must be set"),
    ({**COMPLETE_LDAP, "LDAP_SERVER_URI": ""}, "LDAP_SERVER_URI must be set"),
    ({**COMPLETE_LDAP, "LDAP_BIND_PASSWORD": ""}, "LDAP_BIND_PASSWORD (or LDAP_BIND_PASSWORD_FILE) must be set"),
    ({**COMPLETE_LDAP, "LDAP_SERVER_URI": "dc1.example.test"}, "LDAP_SERVER_URI must start with ldap://"),
    ({**COMPLETE_LDAP, "LDAP_USER_FILTER": "(uid=someone)"}, "LDAP_USER_FILTER must contain %(user)s"),
    ({**COMPLETE_LDAP, "ROLE_GROUPS_OPERATOR": []}, "ROLE_GROUPS_SUPERVISOR, ROLE_GROUPS_OPERATOR or"),
    ({"ROLE_GROUPS_SHIFT_LEAD": ["leads"]}, "ROLE_GROUPS_SHIFT_LEAD is set but no directory is"),
    ({"LOCAL_SIGN_IN": False}, "LOCAL_SIGN_IN=false needs a directory"),
])
def test_a_half_configured_source_is_named(values, named):
    assert any(named in problem for problem in identity_problems(values)), identity_problems(values)


def test_start_tls_is_the_default_except_for_ldaps_and_this_machine():
    assert ldap_start_tls_default("ldap://dc1.example.test") is True
    assert ldap_start_tls_default("ldaps://dc1.example.test") is False
    assert ldap_start_tls_default("ldap://127.0.0.1:3890") is False
    assert ldap_start_tls_default("") is False


@pytest.mark.parametrize(("variable", "value"), [("OIDC_ISSUER", "https://sso.example.test"),
                                                 ("LDAP_SERVER_URI", "ldap://dc1.example.test")])
def test_check_and_check_deploy_refuse_a_half_configured_source(settings, variable, value):
    setattr(settings, variable, value)
    for options in ({}, {"deploy": True}):
        with pytest.raises(SystemCheckError, match="console.E140") as refused:
            call_command("check", **options)
        assert "must be set when " + variable in str(refused.value)


def test_a_complete_source_passes_the_checks(settings):
    for name, value in COMPLETE_OIDC.items():
        setattr(settings, name, value)
    call_command("check")


def _python(code: str, **env) -> subprocess.CompletedProcess:
    """A fresh interpreter with only these variables (and a database URL it never connects to)."""
    clean = {"PATH": os.environ["PATH"], "DJANGO_SETTINGS_MODULE": "console.settings",
             "DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none", "SECRET_KEY": "x" * 50,
             "WCS_CALLBACK_TOKEN": "t" * 30, **env}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True,
                          timeout=60)


def test_start_up_stops_on_a_half_configured_source_naming_the_variable():
    result = _python("import django; django.setup()", OIDC_ISSUER="https://sso.example.test")
    assert result.returncode != 0
    assert "OIDC_CLIENT_ID must be set when OIDC_ISSUER is set" in result.stderr
    assert "OIDC_CLIENT_SECRET" in result.stderr
    result = _python("import django; django.setup()", LDAP_SERVER_URI="ldap://dc1.example.test",
                     LDAP_BIND_DN="cn=console", LDAP_BIND_PASSWORD="secret-bind-password")
    assert result.returncode != 0 and "LDAP_USER_SEARCH_BASE must be set" in result.stderr
    assert "secret-bind-password" not in result.stderr


def test_without_a_directory_nothing_of_the_directory_libraries_is_imported():
    code = ("import sys, django; django.setup(); import console.urls, console.identity.views, "
            "console.identity.backends; from django.test import Client; "
            "print(sorted(m for m in ('ldap', 'django_auth_ldap', 'jwt', 'requests') if m in sys.modules))")
    result = _python(code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
