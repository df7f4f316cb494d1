"""The replay report: report.json (everything) and report.html (what a supervisor reads)."""

import json
from dataclasses import asdict
from pathlib import Path

from django.template.loader import render_to_string

from console.replay.runner import ReplayResult


def _scenario_json(sc) -> dict:
    return {
        "name": sc.name, "title": sc.title, "window": sc.window, "status": sc.status,
        "expected_sequence": sc.expected, "observed_outcome": sc.observed,
        "checks": [asdict(c) for c in sc.checks], "error": sc.error, "workflows": sc.workflows,
        "started_at": sc.started_at.isoformat() if sc.started_at else None,
        "finished_at": sc.finished_at.isoformat() if sc.finished_at else None,
        "duration_s": sc.duration_s, "final_state": sc.final_state, "timeline": sc.timeline.events,
    }


def as_json(result: ReplayResult) -> dict:
    return {
        "run_id": result.run_id,
        "profile": result.profile,
        "database": result.database,
        "started_at": result.started_at.isoformat(),
        "finished_at": result.finished_at.isoformat() if result.finished_at else None,
        "duration_s": result.duration_s,
        "passed": result.passed,
        "error": result.error,
        "setup": result.setup,
        "summary": {
            "scenarios": len(result.scenarios),
            "passed": sum(s.status == "passed" for s in result.scenarios),
            "failed": result.failed_scenarios,
            "not_available": [s.name for s in result.scenarios if s.status == "not available"],
        },
        "baseline": {"verified": result.baseline_verified, "backup_schema": result.backup_schema,
                     "backup_dropped": result.backup_dropped, "tables": result.baseline_tables,
                     "sequences": result.baseline_sequences},
        "restore": result.restore_counts,
        "mismatches": result.mismatches,
        "outbound_http": {"statement": result.outbound_statement, "task_state_requests": result.task_state_requests,
                          "unexpected_requests": result.unexpected_requests, "requests": result.outbound},
        "fixture_mutations": result.journal,
        "run_timeline": result.run_timeline.events,
        "scenarios": [_scenario_json(s) for s in result.scenarios],
    }


def write_report(result: ReplayResult) -> tuple[Path, Path]:
    result.report_dir.mkdir(parents=True, exist_ok=True)
    data = as_json(result)
    json_path = result.report_dir / "report.json"
    json_path.write_text(json.dumps(data, indent=2, default=str), encoding="utf-8")
    html_path = result.report_dir / "report.html"
    html_path.write_text(render_to_string("replay/report.html", {
        "r": data, "mismatches_text": _mismatches_text(result),
        "scenarios": [{**s, "rows": _rows(s["timeline"]), "failed_checks": [c for c in s["checks"] if not c["passed"]]}
                      for s in data["scenarios"]],
        "run_timeline": _rows(data["run_timeline"]),
    }), encoding="utf-8")
    return html_path, json_path


def _rows(events: list[dict]) -> list[dict]:
    """Timeline events for the HTML: time of day, actor, what, the other details as one line."""
    rows = []
    for e in events:
        at = str(e["at"])
        extra = "; ".join(f"{k}: {v}" for k, v in e.items() if k not in ("at", "actor", "what") and v not in ("", None))
        rows.append({"time": at[11:23] if len(at) > 19 else at, "actor": e["actor"], "what": e["what"],
                     "extra": extra[:600]})
    return rows


def _mismatches_text(result: ReplayResult) -> str:
    if result.mismatches is None:
        return "mismatches=unknown (the restore did not complete)"
    if not result.mismatches:
        return "mismatches=[]"
    return f"mismatches=[{len(result.mismatches)} rows, listed below]"
