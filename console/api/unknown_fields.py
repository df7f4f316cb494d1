"""The labels of unknown callback fields (docs/architecture.md §8 "Tolerant reader").

A callback's top-level field the contract does not name is ignored; the receipt keeps its name
as the `field` label of `tidy_callback_unknown_fields_total`, which /metrics sums from the
receipts (so every worker answers the same). A name is cut to MAX_NAME_LENGTH characters; a
process names at most MAX_NAMES distinct fields and counts any further one as `other`, so a WCS
sending a new name in every report cannot grow the metric without bound. Each name is logged
once per process (the first report that carries it), not on every report.

Only a body with unknown fields comes here: the usual report never does.
"""

import logging
import threading

log = logging.getLogger("console.api.unknown_fields")

MAX_NAME_LENGTH = 64
MAX_NAMES = 50
OTHER = "other"
# Names beyond MAX_NAMES are still logged once each, up to this many (then no more lines): a
# bound on this process's memory, whatever the WCS sends.
MAX_LOGGED_OTHERS = 1000

_lock = threading.Lock()
_named: set[str] = set()
_logged_others: set[str] = set()


def unknown_field_labels(endpoint: str, names: list[str]) -> tuple[str, ...]:
    """The label of each of `names` (in order), logging each name the first time this process sees it."""
    labels = []
    for name in names:
        cut = name[:MAX_NAME_LENGTH]
        if cut in _named:
            labels.append(cut)
            continue
        with _lock:
            if cut in _named:
                labels.append(cut)
                continue
            if len(_named) < MAX_NAMES:
                _named.add(cut)
                label, first = cut, True
            else:
                label = OTHER
                first = cut not in _logged_others and len(_logged_others) < MAX_LOGGED_OTHERS
                if first:
                    _logged_others.add(cut)
        labels.append(label)
        if first:
            log.warning("a %s callback carried the unknown field %r: ignored (counted as %r)", endpoint, cut, label,
                        extra={"endpoint": endpoint, "field": cut, "label": label})
    return tuple(labels)


def forget_unknown_fields() -> None:
    """Start counting names afresh (tests: each starts with a fresh process's view)."""
    with _lock:
        _named.clear()
        _logged_others.clear()
