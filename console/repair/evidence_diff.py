"""Journaled evidence, before and after a repair, as rows of a table (pure).

An audit entry stores the evidence as JSON (TidyRecoveryEvidence.as_json). Shown raw it reads
as a Python dict; a supervisor expects the evidence card's layout instead: one field per row,
the value before and after side by side, and the fields the repair changed marked. Nested
objects (the step, the jobs) become dotted fields; lists of plain values read as one value;
lists of objects become one field per element and key. PostgreSQL's jsonb does not keep the
key order, so rows follow the evidence's own field order (recovery.engine.evidence).
"""

from dataclasses import dataclass, fields

from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from recovery.engine.evidence import JobEvidence, StepEvidence, TidyRecoveryEvidence

ABSENT = "—"
_JOB = [f.name for f in fields(JobEvidence)]
_TOP = [f.name for f in fields(TidyRecoveryEvidence)] + ["expected_job_id", "pre_move_state", "terminal_state"]
_NESTED = {"step": [f.name for f in fields(StepEvidence)], "active_job": _JOB, "finish_job": _JOB}


@dataclass(frozen=True)
class EvidenceRow:
    key: str
    label: str
    before: str
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after


def _text(value) -> str:
    if value is None:
        return gettext("none")
    if isinstance(value, bool):
        return gettext("yes") if value else gettext("no")
    if isinstance(value, list | tuple):
        return ", ".join(_text(v) for v in value) if value else gettext("none")
    return str(value)


def _flatten(value, prefix: str, out: dict[str, str]) -> None:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            _flatten(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list | tuple) and any(isinstance(v, dict | list | tuple) for v in value):
        for i, v in enumerate(value):
            _flatten(v, f"{prefix}[{i}]", out)
    else:
        out[prefix or "value"] = _text(value)


def flatten(value) -> dict[str, str]:
    """Dotted field -> readable value, in the evidence's own order."""
    out: dict[str, str] = {}
    if value is not None:
        _flatten(value, "", out)
    return out


# The evidence's field names as a reader says them (a name not listed reads as itself, spaced).
FIELD_LABELS = {
    "workflow_id": _("workflow id"), "workflow_status": _("workflow status"), "origin": _("origin"),
    "lock_count": _("lock count"), "step_count": _("step count"), "completed_step_count": _("completed step count"),
    "active_tidy_job_count": _("active tidy job count"), "step": _("step"), "active_job": _("active job"),
    "finish_job": _("finish job"), "finish_job_count": _("finish job count"), "stock_rows": _("stock rows"),
    "stock_at_source": _("stock at source"), "stock_at_target": _("stock at target"),
    "stock_locations": _("stock locations"), "source_exists": _("source exists"),
    "source_tray_code": _("source tray code"), "target_exists": _("target exists"),
    "target_tray_code": _("target tray code"), "expected_job_id": _("expected job id"),
    "pre_move_state": _("pre move state"), "terminal_state": _("terminal state"), "job_id": _("job id"),
    "in_or_out": _("in or out"), "status": _("status"), "tray_code": _("tray code"),
    "cargo_space_id": _("cargo space id"), "target_cargo_space_id": _("target cargo space id"),
    "step_id": _("step id"), "step_no": _("step no"),
    "finish_report_mismatch": _("WCS finish report mismatched"),
    "finish_report_tray_code": _("WCS reported tray"), "finish_report_location": _("WCS reported place"),
}


def _part(part: str) -> str:
    name, bracket, index = part.partition("[")
    return str(FIELD_LABELS.get(name, name.replace("_", " "))) + bracket + index


def _label(key: str) -> str:
    return " · ".join(_part(p) for p in key.split("."))


def _rank(key: str) -> tuple[int, int]:
    top, _, sub = key.partition(".")
    top = top.split("[")[0]
    nested = _NESTED.get(top, [])
    return (_TOP.index(top) if top in _TOP else len(_TOP), nested.index(sub) if sub in nested else len(nested))


def evidence_rows(before, after) -> list[EvidenceRow]:
    """One row per field of either side. A field missing on one side (a job that appeared or
    went away) shows '—' there; a nested object that is null on both sides stays one row."""
    b, a = flatten(before), flatten(after)
    keys = list(b) + [k for k in a if k not in b]
    # A job null before and present after: drop the lone 'active_job: none' row in favour of
    # its fields, which already say '—' before.
    keys = [k for k in keys if not (any(o.startswith(f"{k}.") or o.startswith(f"{k}[") for o in keys))]
    keys.sort(key=_rank)
    return [EvidenceRow(k, _label(k), b.get(k, ABSENT), a.get(k, ABSENT)) for k in keys]
