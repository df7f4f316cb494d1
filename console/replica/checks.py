"""System checks of the read replica's settings (design §16): half a configuration is named."""

import os

from django.conf import settings
from django.core.checks import Warning

from console.replica import REPLICA


def check_replica_settings(app_configs=None, **kwargs):
    """REPLICA_MAX_LAG_SECONDS only means something with DATABASE_REPLICA_URL (a bad URL already
    stopped the program at start, naming the variable)."""
    if REPLICA not in settings.DATABASES and os.environ.get("REPLICA_MAX_LAG_SECONDS", "").strip():
        return [Warning("REPLICA_MAX_LAG_SECONDS is set but DATABASE_REPLICA_URL (or DATABASE_REPLICA_URL_FILE) "
                        "is not: every page reads the primary and the lag limit is unused.",
                        hint="Set DATABASE_REPLICA_URL to the streaming replica, or unset REPLICA_MAX_LAG_SECONDS.",
                        id="console.W160")]
    return []
