"""Named fault points for the replay, inert unless TIDY_FAULTS names them.

The replay starts real processes with e.g. `TIDY_FAULTS=recovery.before_commit:sleep=5` so it
can SIGKILL a process, or terminate its database connection, while that process is inside a
transaction. Several faults are separated by commas. Kinds:
  sleep=SECONDS   pause at the point (the transaction stays open)
  raise           raise FaultInjected at the point (the transaction rolls back)
Production never sets TIDY_FAULTS; reading an unset variable costs one dict lookup.
"""

import logging
import os
import time

from recovery.errors import TidyError

log = logging.getLogger("recovery.faults")  # the logger's name as log readers know it


class FaultInjected(TidyError, RuntimeError):
    """Raised at a fault point configured with `raise`."""


def _parse(raw: str) -> dict[str, str]:
    faults = {}
    for item in raw.split(","):
        name, _, kind = item.strip().partition(":")
        if name:
            faults[name] = kind or "raise"
    return faults


def fault_point(name: str) -> None:
    raw = os.environ.get("TIDY_FAULTS")
    if not raw:
        return
    kind = _parse(raw).get(name)
    if kind is None:
        return
    log.warning("fault point %s: %s", name, kind)
    if kind.startswith("sleep="):
        time.sleep(float(kind.removeprefix("sleep=")))
    else:
        raise FaultInjected(f"fault injected at {name}")
