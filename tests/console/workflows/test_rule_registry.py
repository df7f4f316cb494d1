"""The decision table's specs are the one declaration of a rule (docs/architecture.md §5, §14):
every rule has a spec, every pause reason a runbook entry, every text of both a Chinese
translation, every rule a demo workflow, and every fact a spec names is a field of the card."""

from pathlib import Path

import polib
from django.utils import translation
from django.utils.translation import gettext

from console.runbook import CATALOG
from console.workflows.evidence_card import build_evidence_card
from recovery.demo.warehouse import CASES
from recovery.engine.decisions import PAUSE_REASONS, RULE_SPECS, Action, Decision, Reason, Rule, decide
from recovery.engine.evidence import evidence_for_workflow
from recovery.management.commands.wms_demo import DEMO_MIX

PO = Path(__file__).resolve().parents[3] / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"


def test_every_rule_has_exactly_one_spec_in_precedence_order():
    assert [spec.rule for spec in RULE_SPECS] == list(Rule)


def test_a_spec_pauses_exactly_when_it_names_a_reason_and_the_facts_behind_it():
    for spec in RULE_SPECS:
        assert (spec.action is Action.PAUSE) == (spec.reason is not None) == bool(spec.facts.keys), spec.rule
        assert spec.decision == Decision(spec.action, spec.rule, spec.reason)
        assert spec.explanation.strip() and spec.explanation.endswith("."), spec.rule


def test_every_pause_reason_is_given_by_a_rule_and_has_a_runbook_entry():
    assert set(PAUSE_REASONS) == set(Reason)
    assert set(CATALOG) == set(PAUSE_REASONS)
    for reason in PAUSE_REASONS:
        entry = CATALOG[reason]
        assert entry.code is reason
        assert entry.rules and all(spec.reason is reason for spec in RULE_SPECS if spec.rule in entry.rules)
        assert str(entry.title) and str(entry.meaning) and entry.floor_checks and entry.allowed, reason


def _translated() -> dict[str, str]:
    po = polib.pofile(str(PO))
    return {e.msgid: e.msgstr for e in po if not e.obsolete and not e.fuzzy and not e.msgctxt and e.msgstr}


def test_every_explanation_and_runbook_text_has_a_chinese_translation():
    with translation.override("en"):
        texts = [spec.explanation for spec in RULE_SPECS] + [
            str(text) for entry in CATALOG.values() for text in (entry.title, entry.meaning, *entry.floor_checks)]
    translated = _translated()
    assert [t for t in texts if t not in translated] == [], "no non-fuzzy zh-Hans translation in django.po"
    with translation.override("zh-hans"):  # and the committed .mo has them
        assert [t for t in texts if gettext(t) == t] == []


def test_every_rule_has_a_demo_workflow():
    assert {CASES[kind] for kind, n in DEMO_MIX.items() if n > 0} == set(Rule)


def test_every_case_of_the_warehouse_builder_is_decided_by_the_rule_it_names(wms):
    decided = {kind: decide(evidence_for_workflow(wms.build(kind).workflow_id)).rule for kind in CASES}
    assert decided == CASES


def test_every_fact_a_spec_names_is_a_field_of_the_evidence_card(wms):
    cards = [build_evidence_card(evidence_for_workflow(wms.build(kind).workflow_id)) for kind in CASES]
    keys = {f.key for card in cards for section in card.sections for f in section.fields}
    named = {key for spec in RULE_SPECS for key in spec.facts.keys}
    assert named - keys == set()
    for card in cards:  # and every disagreement a card shows names the rule that checks it
        assert all(f.rule is not None for f in card.mismatches), card.workflow_id
