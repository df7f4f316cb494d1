"""docs/authority-matrix.md names every decision-table rule and every repair action, read from
their specs (recovery.engine.decisions.RULE_SPECS, console.repair.registry.SPECS): a rule or an action
added without its row fails here, as does a row whose decision or roles drifted from the spec."""

import re
from pathlib import Path

from console import roles
from console.repair.registry import SPECS
from recovery.engine.decisions import PAUSE_REASONS, RULE_SPECS, Action, Reason

MATRIX = Path(__file__).resolve().parents[2] / "docs" / "authority-matrix.md"
ROW = re.compile(r"^\| `([^`]+)` \|(.*)\|\s*$", re.MULTILINE)


def section(text: str, number: int) -> str:
    match = re.search(rf"^## {number}\. .*?(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert match, f"no section {number} in {MATRIX.name}"
    return match.group(0)


def rows(text: str) -> dict[str, list[str]]:
    """The table rows whose first cell is a `code`, by that code: their other cells."""
    return {name: [cell.strip() for cell in rest.split(" | ")] for name, rest in ROW.findall(text)}


def rule_rows(text: str) -> dict[str, list[str]]:
    return rows(section(text, 2))


def action_rows(text: str) -> dict[str, list[str]]:
    return rows(section(text, 3))


def missing_from(text: str, *, rules=RULE_SPECS, actions=SPECS) -> list[str]:
    present_rules, present_actions = rule_rows(text), action_rows(text)
    return ([spec.rule.value for spec in rules if spec.rule.value not in present_rules]
            + [spec.code for spec in actions if spec.code not in present_actions])


def test_every_rule_and_every_action_has_its_row():
    assert missing_from(MATRIX.read_text()) == []


def test_a_rule_or_an_action_without_its_row_is_reported():
    text = MATRIX.read_text()
    no_job = next(line for line in text.splitlines() if line.startswith("| `no-job` |"))
    reissue = next(line for line in text.splitlines() if line.startswith("| `REISSUE` |"))
    assert missing_from(text.replace(no_job + "\n", "").replace(reissue + "\n", "")) == ["no-job", "REISSUE"]


def test_each_rule_row_names_the_decision_of_its_spec():
    found = rule_rows(MATRIX.read_text())
    for spec in RULE_SPECS:
        decision = found[spec.rule.value][0]
        assert decision.split()[0] == spec.action.value, (spec.rule, decision)
        named = set(re.findall(r"RECOVERY_[A-Z_]+", decision))
        assert named == ({spec.reason.value} if spec.reason else set()), (spec.rule, decision)


def test_every_pause_reason_and_the_report_mismatch_have_a_pausing_row():
    found = rule_rows(MATRIX.read_text())
    pausing = {reason for cells in found.values() if cells[0].startswith(Action.PAUSE.value)
               for reason in re.findall(r"RECOVERY_[A-Z_]+", cells[0])}
    assert {r.value for r in PAUSE_REASONS} <= pausing
    assert {r.value for r in Reason} <= pausing
    assert "RECOVERY_WCS_REPORT_MISMATCH" in pausing


class Persona:
    """A signed-in user holding one console role (roles.user_roles reads `_console_roles`)."""

    is_authenticated = True
    is_superuser = False

    def __init__(self, role: str):
        self._console_roles = {role}


def test_each_action_row_names_exactly_the_roles_its_spec_allows():
    found = action_rows(MATRIX.read_text())
    for spec in SPECS:
        allowed = {role for role in roles.ALL_ROLES if spec.may(Persona(role))}
        named = {role.strip() for role in found[spec.code][0].split(",")}
        assert named == allowed, (spec.code, named, allowed)
