"""A workflow's case file: the events of every source (console.casefile.sources) merged into one
order and numbered from 1 (docs/architecture.md §16).

Each source is in its journal's own order (ids); the merge takes the earliest head of the sources
by time, so a source's own order is never changed by its timestamps, and events of one moment are
told in the order of SOURCES (a callback's receipt before the step it advanced, a decision before
the pause it made). A fixed number of queries, whatever the history's length.
"""

import heapq
import json
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone
from django.utils.translation import gettext_lazy, pgettext_lazy

from console.casefile.sources import SOURCES, CaseContext, CaseEvent, notification_rows, repair_rows
from console.input_checks import BIGINT_MAX
from console.messages import plain, shown
from recovery.models import TidyStep, TidyWorkflow

# The kinds as a reader sees them (the JSON keeps the codes).
KIND_LABELS = {
    "created": pgettext_lazy("case file event", "created"),
    "job_status": pgettext_lazy("case file event", "job status"),
    "callback": pgettext_lazy("case file event", "callback"),
    "step_event": pgettext_lazy("case file event", "step event"),
    "decision": pgettext_lazy("case file event", "decision"),
    "paused": pgettext_lazy("case file event", "paused"),
    "notification": pgettext_lazy("case file event", "notification"),
    "acknowledged": pgettext_lazy("case file event", "acknowledged"),
    "repair": pgettext_lazy("case file event", "repair"),
    "note": pgettext_lazy("case file event", "note"),
    "locks_released": pgettext_lazy("case file event", "locks released"),
    "completed": pgettext_lazy("case file event", "completed"),
    "cancelled": pgettext_lazy("case file event", "cancelled"),
}
ACTOR_LABELS = {"wms": gettext_lazy("WMS"), "wcs": gettext_lazy("WCS"), "recovery": gettext_lazy("recovery"),
                "console": gettext_lazy("console"), "callback": gettext_lazy("callback"),
                "repair": gettext_lazy("repair")}


@dataclass(frozen=True)
class DetailItem:
    key: str
    text: str
    block: bool  # a structure (evidence, payload, changes): shown as indented JSON


@dataclass(frozen=True)
class NumberedEvent:
    seq: int
    event: CaseEvent

    @property
    def at(self) -> datetime:
        return self.event.at

    @property
    def kind(self) -> str:
        return self.event.kind

    @property
    def actor(self) -> str:
        return self.event.actor

    @property
    def details(self) -> dict:
        return self.event.details

    @property
    def kind_label(self) -> str:
        return str(KIND_LABELS.get(self.kind, self.kind))

    @property
    def actor_label(self) -> str:
        """A system actor in the reader's language; a person's name as it is."""
        return str(ACTOR_LABELS.get(self.actor, self.actor))

    @property
    def detail_items(self) -> list[DetailItem]:
        items = []
        for key, value in _plain(self.details).items():
            if value is None or value == "" or value == [] or value == {}:
                continue
            if isinstance(value, dict | list):
                items.append(DetailItem(key, json.dumps(value, indent=1, ensure_ascii=False, sort_keys=True), True))
            else:
                items.append(DetailItem(key, str(value).lower() if isinstance(value, bool) else str(value), False))
        return items

    @property
    def summary_html(self):
        """The summary in the reader's language, values as code."""
        return shown(self.event.summary, self.event.summary.english())

    @property
    def summary_text(self) -> str:
        return plain(self.event.summary, self.event.summary.english())

    def as_json(self) -> dict:
        return {"seq": self.seq, "at": timezone.localtime(self.at).isoformat(), "kind": self.kind,
                "actor": self.actor, "summary": self.summary_text, "details": _plain(self.details)}


def _plain(value):
    """Details as JSON values: datetimes as ISO-8601, the rest as it is."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, datetime):
        return timezone.localtime(value).isoformat()
    return value


@dataclass(frozen=True)
class CaseFile:
    workflow: TidyWorkflow
    steps: list[TidyStep]
    events: list[NumberedEvent]
    generated_at: datetime

    def as_json(self) -> dict:
        return {"workflow_id": self.workflow.workflow_id, "events": [e.as_json() for e in self.events]}

    @property
    def kinds(self) -> list[str]:
        return sorted({e.kind for e in self.events})


def case_file(*, workflow_id: int) -> CaseFile | None:
    """Every event of the workflow in order, or None when it does not exist."""
    if not 0 < workflow_id <= BIGINT_MAX:
        return None
    workflow = TidyWorkflow.objects.filter(pk=workflow_id).first()  # tidy_workflow_pkey
    if workflow is None:
        return None
    steps = list(TidyStep.objects.filter(workflow_id=workflow_id).order_by("step_no"))  # workflow_step_no_key
    ctx = CaseContext(workflow=workflow, steps=steps, repairs=repair_rows(workflow_id),
                      notifications=notification_rows(workflow_id))
    merged = heapq.merge(*(source(ctx) for source in SOURCES), key=lambda e: e.at)
    events = [NumberedEvent(seq, event) for seq, event in enumerate(merged, start=1)]
    return CaseFile(workflow=workflow, steps=steps, events=events, generated_at=timezone.now())
