"""LDAP / Active Directory sign-in through django-auth-ldap (design §14). Imported only when
LDAP_SERVER_URI is set (console/identity/backends.py), so python-ldap is needed only then.

django-auth-ldap finds the user's entry (LDAP_USER_SEARCH_BASE, LDAP_USER_FILTER) as the bind
account, binds as the entry with the password typed, and reads the entry's groups
(LDAP_GROUP_SEARCH_BASE, LDAP_GROUP_TYPE). Its settings are built here from the console's LDAP_*
variables instead of AUTH_LDAP_* ones, with both timeouts at DIRECTORY_TIMEOUT_SECONDS. The account
is the entry's stable key (objectGUID on Active Directory, else the DN), never its name; the roles
follow the groups at every sign-in (console/identity/transaction.py).

A directory that does not answer (django-auth-ldap reports each LDAPError through its ldap_error
signal and answers None) is remembered on the request, so the sign-in page names it instead of
saying that the password was wrong.
"""

import logging
import uuid

import ldap
from django.conf import settings
from django.dispatch import receiver
from django_auth_ldap.backend import LDAPBackend, ldap_error
from django_auth_ldap.config import (
    GroupOfNamesType,
    LDAPSearch,
    LDAPSettings,
    NestedActiveDirectoryGroupType,
    PosixGroupType,
)

from console.identity import transaction
from console.identity.config import UNREACHABLE

logger = logging.getLogger("console.security")

SOURCE = "ldap"
# LDAP_GROUP_TYPE: how membership is stored, and which entries are groups.
GROUP_TYPES = {
    "groupOfNames": (GroupOfNamesType, "(objectClass=groupOfNames)"),
    "posixGroup": (PosixGroupType, "(objectClass=posixGroup)"),
    "activeDirectory": (NestedActiveDirectoryGroupType, "(objectClass=group)"),
}


def directory_settings() -> LDAPSettings:
    group_type, group_filter = GROUP_TYPES[settings.LDAP_GROUP_TYPE]
    timeout = settings.DIRECTORY_TIMEOUT_SECONDS
    values = {
        "SERVER_URI": settings.LDAP_SERVER_URI,
        "BIND_DN": settings.LDAP_BIND_DN,
        "BIND_PASSWORD": settings.LDAP_BIND_PASSWORD,
        "START_TLS": settings.LDAP_START_TLS,
        "USER_SEARCH": LDAPSearch(settings.LDAP_USER_SEARCH_BASE, ldap.SCOPE_SUBTREE, settings.LDAP_USER_FILTER),
        "GROUP_SEARCH": LDAPSearch(settings.LDAP_GROUP_SEARCH_BASE, ldap.SCOPE_SUBTREE, group_filter),
        "GROUP_TYPE": group_type(),
        # Connecting, and every operation after, give up after the timeout; referrals are not chased
        # (Active Directory answers them for the whole forest, and chasing one hangs).
        "CONNECTION_OPTIONS": {ldap.OPT_NETWORK_TIMEOUT: timeout, ldap.OPT_TIMEOUT: timeout, ldap.OPT_REFERRALS: 0},
    }
    # A prefix no setting has: every value comes from the dictionary above.
    return LDAPSettings(prefix="TIDY_LDAP_NOT_A_SETTING_", defaults=values)


def stable_key(ldap_user) -> str:
    """objectGUID (Active Directory: it survives renames and moves) or else the entry's DN."""
    attrs = ldap_user.attrs or {}
    guid = (attrs.get("objectGUID") or attrs.get("objectguid") or [None])[0]
    if isinstance(guid, bytes) and len(guid) == 16:
        return f"objectGUID={uuid.UUID(bytes_le=guid)}"
    if isinstance(guid, str) and guid:
        return f"objectGUID={guid.lower()}"
    return ldap_user.dn.lower()


def _first(attrs, name: str) -> str:
    values = (attrs or {}).get(name) or [""]
    value = values[0]
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


class ConsoleLDAPBackend(LDAPBackend):
    @property
    def settings(self):
        if self._settings is None:
            self._settings = directory_settings()
        return self._settings

    def get_or_build_user(self, username, ldap_user):
        user = transaction.directory_account(
            source=SOURCE, key=stable_key(ldap_user), username=username,
            first_name=_first(ldap_user.attrs, "givenName"), last_name=_first(ldap_user.attrs, "sn"),
            email=_first(ldap_user.attrs, "mail"))
        return user, False

    def authenticate_ldap_user(self, ldap_user, password):
        user = ldap_user.authenticate(password)
        if user is None:
            return None
        groups = sorted(ldap_user.group_dns)
        transaction.directory_roles(user=user, source=SOURCE, groups=groups)
        return user


def authenticate(request, *, username: str, password: str):
    return ConsoleLDAPBackend().authenticate(request, username=username, password=password)


def directory_name() -> str:
    """The directory as the sign-in page names it: its address (a URI carries no password)."""
    return settings.LDAP_SERVER_URI.split()[0]


@receiver(ldap_error, dispatch_uid="console-ldap-unreachable")
def remember_unreachable(sender, context, user=None, request=None, exception=None, **kwargs):
    logger.warning("LDAP directory %s did not answer the sign-in (%s): %s", directory_name(), context,
                   type(exception).__name__)
    if request is not None:
        setattr(request, UNREACHABLE, [*getattr(request, UNREACHABLE, []), SOURCE])
