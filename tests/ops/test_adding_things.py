"""docs/development.md, "How to add things", says every file a new repair action, pause reason or notification event
needs, and how many: for each kind, every item of its registry (console.repair.registry.SPECS, the
pausing rules of recovery.engine.decisions.RULE_SPECS, console.notifications.events.SPECS) shows in each
file its list names, the list names no other file, and the count it states is its list's length.
A file a change really needs but the guide leaves out, or a count that drifted, fails here."""

import inspect
import re
from pathlib import Path

import pytest

from console.notifications import events
from console.repair import registry
from recovery.engine.decisions import RULE_SPECS
from recovery.engine.transaction import repair as mutations

ROOT = Path(__file__).resolve().parents[2]
DEVELOPMENT = ROOT / "docs" / "development.md"
COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
          "ten": 10}


def text(path: str) -> str:
    return (ROOT / path).read_text()


def statements_run(mutation) -> set[str]:
    """The wms_sql statements a mutation runs, itself or through the module's helpers it calls."""
    found, sources, seen = set(), [inspect.getsource(mutation)], {mutation.__name__}
    while sources:
        source = sources.pop()
        found |= set(re.findall(r"wms_sql\.([A-Z_]+)", source))
        for helper in set(re.findall(r"\b(_[a-z_]+)\(", source)) - seen:
            seen.add(helper)
            if inspect.isfunction(getattr(mutations, helper, None)):
                sources.append(inspect.getsource(getattr(mutations, helper)))
    return found


def _action_marks(spec) -> dict[str, list[str] | None]:
    """What shows a repair action in each file it needs (None: this action needs nothing there)."""
    sql = sorted(statements_run(spec.mutation)) if spec.mutation else None
    return {
        "console/repair/registry.py": [f'code="{spec.code}"'],
        "recovery/engine/transaction/repair.py": [f"def {spec.mutation.__name__}("] if spec.mutation else None,
        "recovery/engine/wms_sql.py": [f"\n{name} = " for name in sql] if sql is not None else None,
        "tests/console/repair/test_actions.py": [f'@covers("{spec.code}")'],
        "console/runbook.py": [f"Correction.{spec.family.correction.name}"],
        "docs/authority-matrix.md": [f"| `{spec.code}` |"],
        "docs/user-guide.md": [spec.guide_row()],
    }


def _rule_marks(rule_spec) -> dict[str, list[str]]:
    rule, reason = rule_spec.rule, rule_spec.reason
    return {
        "recovery/engine/decisions.py": [f'{rule.name} = "{rule.value}"', f'{reason.name} = "{reason.value}"'],
        "console/runbook.py": [f"Reason.{reason.name}: PauseReasonRunbook("],
        "tests/recovery/test_decisions.py": [f"Rule.{rule.name}"],
        "recovery/demo/warehouse.py": [f"Rule.{rule.name},"],
        "docs/authority-matrix.md": [f"| `{rule.value}` |"],
        "tests/console/workflows/test_evidence_card.py": [f"(Rule.{rule.name}, "],
        "docs/user-guide.md": [f"\n### {reason.value}\n"],
        "docs/user-guide.zh-Hans.md": [f"\n### {reason.value}\n"],
    }


def _event_marks(spec) -> dict[str, list[str]]:
    return {
        "console/notifications/events.py": [f'"{spec.event}"'],
        "tests/console/notifications/test_events.py": [spec.event],
        "docs/user-guide.md": [spec.guide_row()],
    }


# The alternative file of a list entry that names two (a four-eyes step's test).
ALSO = {"tests/console/repair/test_actions.py": "tests/console/repair/test_four_eyes.py"}

KINDS = {
    "A repair action": (registry.SPECS, lambda s: s.code, _action_marks),
    "A pause reason": ([s for s in RULE_SPECS if s.reason is not None], lambda s: s.rule.value, _rule_marks),
    "A notification event": (events.SPECS, lambda s: s.event, _event_marks),
}


def section_14() -> str:
    doc = DEVELOPMENT.read_text()
    match = re.search(r"^## How to add things$.*?(?=^## )", doc, re.MULTILINE | re.DOTALL)
    assert match, "no 'How to add things' in docs/development.md"
    return match.group(0)


def listed(kind: str, section: str) -> tuple[int, list[str]]:
    """The count the guide states for `kind` and the files its numbered list names, in order."""
    match = re.search(rf"^\*\*{kind}\b.*?(?=^\*\*A |\Z)", section, re.MULTILINE | re.DOTALL)
    assert match, f"the guide has no paragraph for {kind}"
    paragraph = match.group(0)
    count = re.search(r"\b(\w+) files?, besides the catalogue", paragraph)
    assert count and count.group(1).lower() in COUNTS, f"{kind}: no 'N files, besides the catalogue'"
    files = re.findall(r"^\d+\. `([^`]+)`", paragraph, re.MULTILINE)
    return COUNTS[count.group(1).lower()], files


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_count_is_its_lists_length_and_every_file_is_one_the_registries_need(kind):
    count, files = listed(kind, section_14())
    items, _, marks = KINDS[kind]
    assert count == len(files) == len(set(files)), (kind, count, files)
    assert all((ROOT / f).is_file() for f in files), files
    needed = list(marks(items[0]))
    assert set(files) == set(needed), f"{kind}: the guide lists {files}, the registries need {needed}"


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_item_of_the_registry_shows_in_every_file_its_list_names(kind):
    _, files = listed(kind, section_14())
    items, name, marks = KINDS[kind]
    missing = []
    for item in items:
        for path, wanted in marks(item).items():
            if wanted is None:
                continue
            assert wanted, f"{name(item)} names nothing to look for in {path}"
            contents = text(path) + (text(ALSO[path]) if path in ALSO else "")
            missing += [(name(item), path, w) for w in wanted if w not in contents]
    assert missing == []


def test_a_file_left_out_of_a_list_or_a_wrong_count_is_reported():
    section = section_14()
    count, files = listed("A repair action", section)
    without_matrix = re.sub(r"^\d+\. `docs/authority-matrix.md`.*\n(?:   .*\n)*", "", section, flags=re.MULTILINE)
    assert listed("A repair action", without_matrix)[1] == [f for f in files if f != "docs/authority-matrix.md"]
    assert set(listed("A repair action", without_matrix)[1]) != set(_action_marks(registry.SPECS[0]))
    recounted = section.replace("**A repair action.** Seven files", "**A repair action.** Five files")
    assert listed("A repair action", recounted)[0] == 5 != len(files)
