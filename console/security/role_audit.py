"""Every change of a user's roles becomes a RoleChangeAudit row: the groups (console roles), and
the account flags that grant or withdraw rights of their own (`is_superuser`: every console right
and the admin; `is_staff`; `is_active`: may sign in at all).

The admin records its own saves (it knows who is signed in, and one save is one row however
many groups and flags it changes); any other change (a shell, a command, application code) is
caught by the m2m_changed signal of User.groups, from either side of the relation, and by the
save signals of User for the flags. A QuerySet.update() or raw SQL passes no signal: such a change
is not seen (the same holds for groups).
"""

from contextlib import contextmanager
from contextvars import ContextVar

from django.contrib.auth import get_user_model
from django.db.models.signals import m2m_changed, post_save, pre_save
from django.dispatch import receiver

from console.models import RoleChangeAudit

_admin_saving: ContextVar[bool] = ContextVar("console_admin_saving_roles", default=False)

User = get_user_model()

FLAGS = ("is_superuser", "is_staff", "is_active")
# What a new account is before anyone grants it anything: a row is written only when an account
# is created with other flags (createsuperuser, an inactive account).
NEW_ACCOUNT_FLAGS = {"is_superuser": False, "is_staff": False, "is_active": True}


def current_groups(user_id: int) -> list[str]:
    return sorted(User.groups.through.objects.filter(user_id=user_id).values_list("group__name", flat=True))


def flags_of(user) -> dict[str, bool]:
    return {flag: bool(getattr(user, flag)) for flag in FLAGS}


def stored_flags(user_id: int | None) -> dict[str, bool] | None:
    """The flags as the database holds them (None: no such account yet)."""
    if user_id is None:
        return None
    row = User.objects.filter(pk=user_id).values(*FLAGS).first()
    return {flag: bool(row[flag]) for flag in FLAGS} if row else None


def record_role_change(*, user, before: list[str], after: list[str], changed_by: str, via: str,
                       flags_before: dict | None = None, flags_after: dict | None = None,
                       groups_seen: list[str] | None = None) -> None:
    """One row when the groups or the flags changed; the flags default to the user's as they are.
    A sign-in through a directory (via oidc or ldap) also records the directory groups it saw."""
    flags_after = flags_after if flags_after is not None else flags_of(user)
    flags_before = flags_before if flags_before is not None else flags_after
    if before != after or flags_before != flags_after:
        RoleChangeAudit.objects.create(user_id=user.pk, username=user.get_username(), before=before, after=after,
                                       flags_before=flags_before, flags_after=flags_after, changed_by=changed_by,
                                       via=via, groups_seen=groups_seen)


@contextmanager
def admin_saving():
    """Around a whole admin form view: the signal handlers leave its saves to the admin, which
    records one row per save (admin_before, admin_record). A directory sign-in's role change
    (console/identity/transaction.py) does the same."""
    token = _admin_saving.set(True)
    try:
        yield
    finally:
        _admin_saving.reset(token)


def admin_before(user) -> tuple[list[str], dict[str, bool]]:
    """The groups and flags of `user` as stored, before the admin saves it (a new account: none)."""
    flags = stored_flags(user.pk)
    if flags is None:
        return [], dict(NEW_ACCOUNT_FLAGS)
    return current_groups(user.pk), flags


def admin_record(*, user, before: tuple[list[str], dict[str, bool]], changed_by: str) -> None:
    groups_before, flags_before = before
    record_role_change(user=user, before=groups_before, after=current_groups(user.pk), changed_by=changed_by,
                       via="admin", flags_before=flags_before, flags_after=flags_of(user))


def _touches_flags(update_fields) -> bool:
    # A sign-in saves last_login alone: no read, no row.
    return update_fields is None or bool(set(update_fields) & set(FLAGS))


@receiver(pre_save, sender=User, dispatch_uid="console-role-flags-before")
def remember_flags(sender, instance, raw=False, update_fields=None, **kwargs):
    if raw or _admin_saving.get() or not _touches_flags(update_fields):
        return
    instance._console_flags_before = None if instance._state.adding else stored_flags(instance.pk)


@receiver(post_save, sender=User, dispatch_uid="console-role-flags-after")
def record_flag_change(sender, instance, created, raw=False, update_fields=None, **kwargs):
    if raw or _admin_saving.get() or not _touches_flags(update_fields):
        return
    before = getattr(instance, "_console_flags_before", None)
    instance._console_flags_before = None
    if created or before is None:
        before = dict(NEW_ACCOUNT_FLAGS)
    groups = [] if created else current_groups(instance.pk)
    record_role_change(user=instance, before=groups, after=groups, changed_by="", via="application",
                       flags_before=before, flags_after=flags_of(instance))


@receiver(m2m_changed, sender=User.groups.through, dispatch_uid="console-role-change-audit")
def record_group_change(sender, instance, action, reverse, pk_set, **kwargs):
    if _admin_saving.get() or action not in {"pre_add", "pre_remove", "pre_clear",
                                             "post_add", "post_remove", "post_clear"}:
        return
    if reverse:  # group.user_set.add(...): instance is the group, pk_set the users
        user_ids = list(pk_set) if pk_set is not None else list(
            sender.objects.filter(group_id=instance.pk).values_list("user_id", flat=True))
    else:
        user_ids = [instance.pk]
    if action.startswith("pre_"):
        instance._console_roles_before = {uid: current_groups(uid) for uid in user_ids}
        return
    before_by_user = getattr(instance, "_console_roles_before", {})
    for user in User.objects.filter(pk__in=list(before_by_user) or user_ids):
        record_role_change(user=user, before=before_by_user.get(user.pk, []), after=current_groups(user.pk),
                           changed_by="", via="application")
    instance._console_roles_before = {}
