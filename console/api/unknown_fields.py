"""The unknown fields of a callback (docs/architecture.md §8 "Tolerant reader").

A callback's top-level field the contract does not name is ignored. Its name (cut to
MAX_NAME_LENGTH characters) is counted in `tidy_callback_unknown_fields_total{endpoint, field}`
when the callback is read: under its own name while the site has fewer than MAX_NAMES labels or
the name is one of them, else as `other`. The labels are the database's, not a process's
(recovery/engine/callback_fields.py): recycled workers and other nodes share the same 50. This process
keeps the labels it has learnt, and once the site has MAX_NAMES of them it never asks again (a
label is never removed). The receipt keeps each distinct name once, at most MAX_NAMES of them, and
how many more there were. Each name is logged once per process (the first report that carries it),
for at most MAX_LOGGED names.

Only a body with unknown fields comes here: the usual report never does.
"""

import logging
import threading
from collections import Counter
from dataclasses import dataclass

from django.db import DatabaseError

from recovery.engine.callback_fields import OTHER, field_labels_register, unknown_fields_count
from recovery.models import CallbackFieldLabel

log = logging.getLogger("console.api.unknown_fields")

MAX_NAME_LENGTH = 64
MAX_NAMES = CallbackFieldLabel.MAX_NAMES
# Names are logged once each, up to this many in a process (then no more lines): a bound on this
# process's memory, whatever the WCS sends.
MAX_LOGGED = 1050

_lock = threading.Lock()
_labels: set[str] = set()  # names this process knows to be labels of the site
_full = False  # the site has MAX_NAMES labels: every other name is `other`, for good
_logged: set[str] = set()


@dataclass(frozen=True)
class UnknownFields:
    """What a receipt keeps of a request's unknown fields."""

    names: tuple[str, ...]  # each distinct name once (cut), in the body's order, at most MAX_NAMES
    rest: int  # how many distinct names beyond those

    def receipt_kw(self) -> dict:
        return {"unknown_fields": self.names, "unknown_fields_rest": self.rest}


def _labels_of(names: list[str]) -> set[str]:
    """Which of `names` are labels of the site, asking the database only about names this process
    has not learnt while the site still has free labels."""
    global _full
    new = [name for name in names if name not in _labels and name != OTHER]
    if new and not _full:
        known = field_labels_register(new[:MAX_NAMES])
        with _lock:
            _labels.update(known)
            _full = len(known) >= MAX_NAMES
    return _labels


def unknown_fields_record(endpoint: str, names: list[str]) -> UnknownFields:
    """Count the unknown field names of one request (in the order the body had them) and return
    what its receipt keeps. A database failure here is logged: the request goes on (its receipt
    still names them), only the counter misses it."""
    distinct = list(dict.fromkeys(name[:MAX_NAME_LENGTH] for name in names))
    try:
        labels = _labels_of(distinct)
        counts = Counter(name if name in labels else OTHER for name in distinct)
        unknown_fields_count(endpoint=endpoint, counts=counts)
    except DatabaseError:
        log.exception("could not count the unknown fields of a %s callback", endpoint)
        labels = _labels
    _log_first_sightings(endpoint, distinct, labels)
    return UnknownFields(tuple(distinct[:MAX_NAMES]), max(0, len(distinct) - MAX_NAMES))


def _log_first_sightings(endpoint: str, names: list[str], labels: set[str]) -> None:
    for name in names:
        if name in _logged:
            continue
        with _lock:
            if name in _logged or len(_logged) >= MAX_LOGGED:
                continue
            _logged.add(name)
        label = name if name in labels else OTHER
        log.warning("a %s callback carried the unknown field %r: ignored (counted as %r)", endpoint, name, label,
                    extra={"endpoint": endpoint, "field": name, "label": label})


def forget_unknown_fields() -> None:
    """Start afresh, as a new process does (tests: each starts with an empty database)."""
    global _full
    with _lock:
        _labels.clear()
        _logged.clear()
        _full = False
