"""Every change of a user's groups (console roles) becomes a RoleChangeAudit row.

The admin records its own saves (it knows who is signed in, and one save is one row however
many groups it adds and removes); any other change (a shell, a command, application code) is
caught by the m2m_changed signal of User.groups, from either side of the relation.
"""

from contextlib import contextmanager
from contextvars import ContextVar

from django.contrib.auth import get_user_model
from django.db.models.signals import m2m_changed
from django.dispatch import receiver

from console.models import RoleChangeAudit

_admin_saving: ContextVar[bool] = ContextVar("console_admin_saving_roles", default=False)

User = get_user_model()


def current_groups(user_id: int) -> list[str]:
    return sorted(User.groups.through.objects.filter(user_id=user_id).values_list("group__name", flat=True))


def record_role_change(*, user, before: list[str], after: list[str], changed_by: str, via: str) -> None:
    if before != after:
        RoleChangeAudit.objects.create(user_id=user.pk, username=user.get_username(), before=before, after=after,
                                       changed_by=changed_by, via=via)


@contextmanager
def admin_role_change(*, user, changed_by: str):
    """Around the admin's save of `user`'s relations: one row for the whole save."""
    before = current_groups(user.pk) if user.pk else []
    token = _admin_saving.set(True)
    try:
        yield
    finally:
        _admin_saving.reset(token)
    record_role_change(user=user, before=before, after=current_groups(user.pk), changed_by=changed_by, via="admin")


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
