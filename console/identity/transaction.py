"""The identity feature's writes (design §14), each in one transaction: the account a directory
identity signs in as, its console roles from the groups seen (with the role-change audit row), and
the record of a break-glass sign-in."""

import hashlib

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.utils import timezone

from console import roles
from console.models import BreakGlassSignIn, DirectoryIdentity
from console.security import role_audit

User = get_user_model()
USERNAME_LENGTH = 150


def free_username(wanted: str, *, source: str, key: str) -> str:
    """The directory's user name when no account has it; otherwise it followed by a short digest of
    the identity's key, so two people with one name (or a local account of that name) stay apart
    (`+` is a character Django's user-name rule allows, so the admin can still edit the account)."""
    wanted = (wanted or "user").strip()[:USERNAME_LENGTH - 10] or "user"
    if not User.objects.filter(username__iexact=wanted).exists():
        return wanted
    digest = hashlib.sha256(f"{source} {key}".encode()).hexdigest()
    for length in (8, 16, 32):
        candidate = f"{wanted}+{digest[:length]}"
        if not User.objects.filter(username__iexact=candidate).exists():
            return candidate
    return f"{wanted}+{digest}"[:USERNAME_LENGTH]


@transaction.atomic
def directory_account(*, source: str, key: str, username: str, first_name: str = "", last_name: str = "",
                      email: str = "") -> User:
    """The account of the directory identity (source, key): found by that key, never by name, or
    created (with no usable password) at the first sign-in. Names and e-mail follow the directory."""
    identity = (DirectoryIdentity.objects.select_for_update().select_related("user")
                .filter(source=source, key=key).first())
    if identity is None:
        user = User(username=free_username(username, source=source, key=key))
        user.set_unusable_password()
        user.first_name, user.last_name, user.email = first_name[:150], last_name[:150], email[:254]
        user.save()
        DirectoryIdentity.objects.create(user=user, source=source, key=key, last_sign_in=timezone.now())
        return user
    user = identity.user
    fields = {"first_name": first_name[:150], "last_name": last_name[:150], "email": email[:254]}
    changed = [name for name, value in fields.items() if getattr(user, name) != value]
    for name in changed:
        setattr(user, name, fields[name])
    if changed:
        user.save(update_fields=changed)
    return user


@transaction.atomic
def directory_roles(*, user, source: str, groups: list[str]) -> set[str]:
    """Sets the console roles of `user` from the directory groups seen at this sign-in: a role is
    granted when one of its groups is there and removed when none is. A change is one role-change
    audit row naming the source and the groups seen. Returns the roles now held."""
    groups = sorted({str(g) for g in groups})
    wanted = roles.roles_from_groups(groups, source=source, mapping=roles.role_groups())
    DirectoryIdentity.objects.filter(user=user).update(groups=groups, last_sign_in=timezone.now())
    before = role_audit.current_groups(user.pk)
    held = set(before) & set(roles.ALL_ROLES)
    if held != wanted:
        with role_audit.admin_saving():  # one row written here, not one per group by the signals
            if held - wanted:
                user.groups.remove(*Group.objects.filter(name__in=held - wanted))
            if wanted - held:
                user.groups.add(*(Group.objects.get_or_create(name=role)[0] for role in sorted(wanted - held)))
        role_audit.record_role_change(user=user, before=before, after=role_audit.current_groups(user.pk),
                                      changed_by="", via=source, groups_seen=groups)
    if hasattr(user, "_console_roles"):
        del user._console_roles
    return wanted


def record_break_glass(*, user, address: str) -> None:
    BreakGlassSignIn.objects.create(user_id=user.pk, username=user.get_username(), address=address[:64])
