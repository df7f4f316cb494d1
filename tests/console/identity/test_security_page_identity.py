"""The security page shows which sign-in sources are on and the role mapping in force, and each
directory role change with its source and the groups seen (design §14)."""

from tests.console.identity.ldap_support import LEADS, PASSWORD, group_dn
from tests.console.identity.oidc_support import LEADS as OIDC_LEADS


def test_it_shows_the_sources_and_the_mapping_in_force(client, ldap_on, oidc_on, settings):
    settings.ROLE_GROUPS_SHIFT_LEAD = [group_dn(ldap_on, LEADS), OIDC_LEADS]  # both directories' leads
    assert client.post("/accounts/login/", {"username": "lena", "password": PASSWORD}).status_code == 302
    page = client.get("/security/").content.decode()
    for source in ("local", "ldap", "oidc"):
        assert f'data-source="{source}"' in page
    assert ldap_on.ldap_uri in page and oidc_on in page
    mapping = page[page.index('id="role-mapping"'):]
    assert OIDC_LEADS in mapping
    # The role change of this sign-in, with its source and the groups it saw.
    changes = page[page.index('id="role-changes-h"'):]
    assert "LDAP sign-in" in changes and group_dn(ldap_on, LEADS).lower() in changes.lower()


def test_without_a_directory_it_says_roles_come_from_the_administrator(client, personas):
    client.force_login(personas["shiftlead"])
    page = client.get("/security/").content.decode()
    assert "No directory is configured" in page
    assert page.count(">off<") == 2
