"""Cordoning from the console: the person's hourly limit (console.rate_limits, as notes), then
recovery.engine.cordons, the only writer of cordons, in the same transaction."""

from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from console.rate_limits import RATE_WINDOW, rate_limit_check
from recovery.engine.cordons import cordon_create
from recovery.models import Cordon

# The first key of the cordon post's advisory lock ("CORD" in ASCII; notes use "NOTE").
CORDON_RATE_LOCK_NAMESPACE = 0x434F5244


def cordon_add(*, user, scope: str, place: str, reason: str, ends_at: datetime | None,
               now: datetime | None = None) -> Cordon:
    """Cordon a place for `user`; RateLimited (nothing stored) when the person created
    CORDONS_PER_USER_PER_HOUR cordons in the last hour, CordonRefused for a bad place or end."""
    now = now or timezone.now()
    username = user.get_username()
    with transaction.atomic():
        # Cordons by one person in the last hour: a handful of rows at most (recovery_cordon is small).
        rate_limit_check(namespace=CORDON_RATE_LOCK_NAMESPACE, user=user, limit=settings.CORDONS_PER_USER_PER_HOUR,
                         now=now, recent_times=Cordon.objects.filter(created_by=username[:150],
                                                                     created_at__gt=now - RATE_WINDOW)
                         .order_by("-created_at").values_list("created_at", flat=True))
        return cordon_create(scope=scope, place=place, reason=reason, ends_at=ends_at, username=username, now=now)
