"""System checks of the sign-in sources (design §14), run by every `manage.py check` (start-up,
`check --deploy`): a half-configured source is refused naming the variable (the same sentences
console/settings.py stops with), as is a configured source whose libraries are not installed.
The break-glass record is append-only like the role-change audit."""

import importlib.util

from django.conf import settings
from django.core.checks import Error, Tags, register

from console.checks import append_only_check
from console.identity import config

IDENTITY_SETTINGS = (*config.OIDC_REQUIRED, *config.LDAP_REQUIRED, *config.ROLE_GROUP_SETTINGS, "LDAP_BIND_DN",
                     "LDAP_BIND_PASSWORD", "LDAP_USER_FILTER", "OIDC_SCOPES", "LOCAL_SIGN_IN")
# The optional extra `directory` (pyproject.toml) brings these.
LIBRARIES = {"ldap": ("ldap", "django_auth_ldap"), "oidc": ("jwt", "cryptography")}


def missing_libraries(source: str) -> list[str]:
    return [name for name in LIBRARIES[source] if importlib.util.find_spec(name) is None]


@register(Tags.security)
def check_sign_in_sources(app_configs=None, **kwargs):
    values = {name: getattr(settings, name, None) for name in IDENTITY_SETTINGS}
    errors = [Error(problem, id="console.E140") for problem in config.identity_problems(values)]
    for source, variable in (("ldap", "LDAP_SERVER_URI"), ("oidc", "OIDC_ISSUER")):
        if getattr(settings, variable, "") and (missing := missing_libraries(source)):
            errors.append(Error(f"{variable} is set but {', '.join(missing)} cannot be imported",
                                hint="Install the optional extra: pip install '.[directory]' (python-ldap builds "
                                     "with Debian's libldap2-dev and libsasl2-dev).", id="console.E141"))
    return errors


check_break_glass_is_append_only = register(append_only_check(
    subject="The break-glass sign-in record", table="console_breakglasssignin", migration="0015_directory_identity",
    error_id="console.E142", inspect_error_id="console.E143"), Tags.database)
