"""Journaled evidence, before and after a repair, as rows of a table (pure).

An audit entry stores the evidence as JSON (TidyRecoveryEvidence.as_json). Shown raw it reads
as a Python dict; a supervisor expects the evidence card's layout instead: one field per row,
the value before and after side by side, and the fields the repair changed marked. Nested
objects (the step, the jobs) become dotted fields; lists of plain values read as one value;
lists of objects become one field per element and key. PostgreSQL's jsonb does not keep the
key order, so rows follow the evidence's own field order (recovery.evidence).
"""

from dataclasses import dataclass, fields

from recovery.evidence import JobEvidence, StepEvidence, TidyRecoveryEvidence

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
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(_text(v) for v in value) if value else "none"
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


def _label(key: str) -> str:
    return key.replace("_", " ").replace(".", " · ")


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
