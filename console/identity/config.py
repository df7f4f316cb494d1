"""What makes a sign-in source half-configured (design §14). Pure: it reads a mapping of the
identity settings, so console/settings.py refuses to start with the same words that the system
check (console/identity/checks.py) gives `check --deploy`. No Django import here: settings.py
imports this module while Django is not set up yet."""

from collections.abc import Mapping
from urllib.parse import urlsplit

OIDC_REQUIRED = ("OIDC_ISSUER", "OIDC_CLIENT_ID", "OIDC_CLIENT_SECRET")
LDAP_REQUIRED = ("LDAP_SERVER_URI", "LDAP_USER_SEARCH_BASE", "LDAP_GROUP_SEARCH_BASE")
ROLE_GROUP_SETTINGS = ("ROLE_GROUPS_SUPERVISOR", "ROLE_GROUPS_OPERATOR", "ROLE_GROUPS_SHIFT_LEAD")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
# The request attribute naming the sources that did not answer this sign-in: set by
# console/identity/ldap_directory.py, read by the sign-in page and by the lockout's whitelist.
UNREACHABLE = "directory_unreachable"


def _variable(name: str) -> str:
    return f"{name} (or {name}_FILE)" if name.endswith(("_SECRET", "_PASSWORD")) else name


def is_loopback(host: str | None) -> bool:
    return bool(host) and (host in LOOPBACK_HOSTS or host.startswith("127."))


def oidc_on(values: Mapping) -> bool:
    return bool(values.get("OIDC_ISSUER"))


def ldap_on(values: Mapping) -> bool:
    return bool(values.get("LDAP_SERVER_URI"))


def identity_problems(values: Mapping) -> list[str]:
    """One sentence per problem, each naming the variable to set or fix; empty when every source is
    either off (none of its variables set) or complete."""
    problems = []
    oidc_set = [name for name in OIDC_REQUIRED if values.get(name)]
    if oidc_set:
        problems += [f"{_variable(name)} must be set when {oidc_set[0]} is set (OpenID Connect sign-in)"
                     for name in OIDC_REQUIRED if not values.get(name)]
    issuer = values.get("OIDC_ISSUER") or ""
    if issuer:
        parts = urlsplit(issuer)
        if parts.scheme != "https" and not (parts.scheme == "http" and is_loopback(parts.hostname)):
            problems.append(f"OIDC_ISSUER must be an https:// address (http:// only on this machine), got {issuer!r}")
    if oidc_set and "openid" not in (values.get("OIDC_SCOPES") or "").split():
        problems.append(f"OIDC_SCOPES must contain openid, got {values.get('OIDC_SCOPES')!r}")
    ldap_set = [name for name in (*LDAP_REQUIRED, "LDAP_BIND_DN", "LDAP_BIND_PASSWORD") if values.get(name)]
    if ldap_set:
        problems += [f"{name} must be set when {ldap_set[0]} is set (LDAP / Active Directory sign-in)"
                     for name in LDAP_REQUIRED if not values.get(name)]
        if bool(values.get("LDAP_BIND_DN")) != bool(values.get("LDAP_BIND_PASSWORD")):
            missing = "LDAP_BIND_PASSWORD" if values.get("LDAP_BIND_DN") else "LDAP_BIND_DN"
            problems.append(f"{_variable(missing)} must be set with "
                            f"{'LDAP_BIND_DN' if missing == 'LDAP_BIND_PASSWORD' else 'LDAP_BIND_PASSWORD'}")
    uri = values.get("LDAP_SERVER_URI") or ""
    if uri and not all(u.startswith(("ldap://", "ldaps://")) for u in uri.split()):
        problems.append(f"LDAP_SERVER_URI must start with ldap:// or ldaps://, got {uri!r}")
    if ldap_set and "%(user)s" not in (values.get("LDAP_USER_FILTER") or ""):
        problems.append(f"LDAP_USER_FILTER must contain %(user)s, got {values.get('LDAP_USER_FILTER')!r}")
    any_source = oidc_on(values) or ldap_on(values)
    mapped = [name for name in ROLE_GROUP_SETTINGS if values.get(name)]
    if any_source and not mapped:
        problems.append("ROLE_GROUPS_SUPERVISOR, ROLE_GROUPS_OPERATOR or ROLE_GROUPS_SHIFT_LEAD must be set when a "
                        "directory signs people in (without them no directory user has a console role)")
    if mapped and not any_source:
        problems.append(f"{mapped[0]} is set but no directory is: set OIDC_ISSUER or LDAP_SERVER_URI")
    if values.get("LOCAL_SIGN_IN") is False and not any_source:
        problems.append("LOCAL_SIGN_IN=false needs a directory (OIDC_ISSUER or LDAP_SERVER_URI): "
                        "otherwise only superusers could sign in")
    return problems


def ldap_start_tls_default(uri: str) -> bool:
    """StartTLS unless the URI is ldaps:// already or the directory is on this machine."""
    first = uri.split()[0] if uri.split() else ""
    if not first or first.startswith("ldaps://"):
        return False
    return not is_loopback(urlsplit(first).hostname)


def origin(url: str) -> str:
    """scheme://host[:port] of an address ("" for none)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""
