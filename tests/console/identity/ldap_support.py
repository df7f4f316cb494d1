"""A real LDAP directory for the identity tests: Debian's slapd, started by python-ldap's
slapdtest.SlapdObject in a temporary folder on a free port (once per test process), with people
and groupOfNames groups. scripts/test installs slapd and ldap-utils when they are missing."""

import os
import shutil
import tempfile

import pytest

SBIN = "/usr/sbin"
PASSWORD = "directory-password-1"
LEADS = "shift-leads"
OPERATORS = "operators"


def group_dn(directory, name: str) -> str:
    return f"cn={name},ou=groups,{directory.suffix}"


def person_dn(directory, uid: str) -> str:
    return f"uid={uid},ou=people,{directory.suffix}"


# uid: (display name, groups). kim and kimberly share a display name: two people all the same.
PEOPLE = {
    "lena": ("Lena Berg", [LEADS]),
    "kim": ("Kim Lee", [LEADS]),
    "kimberly": ("Kim Lee", [LEADS]),
    "otto": ("Otto Brandt", [OPERATORS]),
    "nina": ("Nina Sommer", []),
}


def _ldif(directory) -> str:
    suffix = directory.suffix
    dc = suffix.split(",")[0].split("=")[1]
    entries = [f"dn: {suffix}\nobjectClass: dcObject\nobjectClass: organization\ndc: {dc}\no: Tidy test warehouse\n",
               f"dn: ou=people,{suffix}\nobjectClass: organizationalUnit\nou: people\n",
               f"dn: ou=groups,{suffix}\nobjectClass: organizationalUnit\nou: groups\n"]
    for uid, (name, _) in PEOPLE.items():
        given, family = name.split(" ", 1)
        entries.append(f"dn: {person_dn(directory, uid)}\nobjectClass: inetOrgPerson\nuid: {uid}\ncn: {name}\n"
                       f"givenName: {given}\nsn: {family}\nmail: {uid}@example.test\nuserPassword: {PASSWORD}\n")
    for group in (LEADS, OPERATORS):
        members = [person_dn(directory, uid) for uid, (_, groups) in PEOPLE.items() if group in groups]
        # groupOfNames needs a member: a placeholder that is nobody, so a group can lose its last person.
        entries.append(f"dn: {group_dn(directory, group)}\nobjectClass: groupOfNames\ncn: {group}\n"
                       f"member: cn=nobody,{suffix}\n" + "".join(f"member: {m}\n" for m in members))
    return "\n".join(entries)


@pytest.fixture(scope="session")
def directory():
    os.environ["PATH"] = os.environ.get("PATH", "") + os.pathsep + SBIN
    slapdtest = pytest.importorskip("slapdtest", reason="python-ldap (the optional extra `directory`)")

    class Directory(slapdtest.SlapdObject):
        openldap_schema_files = ("core.ldif", "cosine.ldif", "inetorgperson.ldif")
        TMPDIR = tempfile.mkdtemp(prefix="tidy-test-slapd-")  # its folder; never the working tree

    server = Directory()
    server.start()
    server.ldapadd(_ldif(server))
    yield server
    server.stop()
    shutil.rmtree(Directory.TMPDIR, ignore_errors=True)


@pytest.fixture
def ldap_on(db, directory, settings):
    """LDAP sign-in on, against the session's slapd."""
    for name, value in ldap_settings(directory).items():
        setattr(settings, name, value)
    return directory


def ldap_settings(directory, **changes) -> dict:
    """The console's LDAP_* settings for this directory (loopback: no StartTLS)."""
    return {
        "LDAP_SERVER_URI": directory.ldap_uri,
        "LDAP_BIND_DN": directory.root_dn,
        "LDAP_BIND_PASSWORD": directory.root_pw,
        "LDAP_USER_SEARCH_BASE": f"ou=people,{directory.suffix}",
        "LDAP_USER_FILTER": "(uid=%(user)s)",
        "LDAP_GROUP_SEARCH_BASE": f"ou=groups,{directory.suffix}",
        "LDAP_GROUP_TYPE": "groupOfNames",
        "LDAP_START_TLS": False,
        "ROLE_GROUPS_SHIFT_LEAD": [group_dn(directory, LEADS)],
        "ROLE_GROUPS_OPERATOR": [group_dn(directory, OPERATORS)],
        "ROLE_GROUPS_SUPERVISOR": [],
        **changes,
    }


def set_membership(directory, uid: str, group: str, *, member: bool) -> None:
    change = "add" if member else "delete"
    directory.ldapmodify(f"dn: {group_dn(directory, group)}\nchangetype: modify\n{change}: member\n"
                         f"member: {person_dn(directory, uid)}\n")
