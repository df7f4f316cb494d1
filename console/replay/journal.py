"""The replay's journals: every fixture mutation (the SQL, why, when, which scenario) and the
timeline of what the replay did (process starts, kills, requests, observations)."""

import json
import threading
from dataclasses import dataclass, field
from datetime import datetime

from django.db import connection
from django.utils import timezone


def _jsonable(value):
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)


@dataclass
class MutationJournal:
    """Fixture mutations are test setup, not evidence patching: recovery must decide from the WMS
    data as the scenario left it (docs/architecture.md §13). Each is written here before the
    report is, and undone by the final restore."""

    entries: list[dict] = field(default_factory=list)
    scenario: str = "setup"

    def execute(self, sql: str, params: dict | None, *, why: str) -> int | list:
        at = timezone.now()
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            result = cursor.fetchall() if cursor.description else cursor.rowcount
        self.entries.append({
            "at": at.isoformat(), "scenario": self.scenario, "kind": "sql", "why": why, "sql": sql.strip(),
            "params": _jsonable(params or {}),
            "rows": result if isinstance(result, int) else len(result),
        })
        return result

    def record(self, *, kind: str, why: str, call: str, result=None) -> None:
        """A mutation made through a service (tidy creation, a repair, a settling recovery cycle)."""
        self.entries.append({"at": timezone.now().isoformat(), "scenario": self.scenario, "kind": kind, "why": why,
                             "sql": call, "params": {}, "rows": _jsonable(result)})


@dataclass
class Timeline:
    events: list[dict] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, what: str, *, actor: str = "replay", at: datetime | None = None, **detail) -> None:
        with self._lock:
            self.events.append({"at": (at or timezone.now()).isoformat(), "actor": actor, "what": what,
                                **{k: _jsonable(v) for k, v in detail.items()}})
