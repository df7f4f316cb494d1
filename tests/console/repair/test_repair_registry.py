"""The repair-action registry (console/repair/registry.py) is complete: every action has a
mutation (or is declared to change nothing), a form, a route when the panel offers it, a test of
its applied path, Chinese labels, and every correction the runbook allows for a pause reason is
offered by some action with a reason code for that reason."""

import inspect
import re
from dataclasses import MISSING, fields
from pathlib import Path

import pytest
from django.urls import resolve, reverse
from django.utils import translation

from console.repair import registry, views
from console.repair import texts as t
from console.repair.forms import RepairForm
from console.repair.rules import RepairRequest
from console.runbook import CATALOG, Correction
from recovery.engine.decisions import Reason
from recovery.engine.transaction import repair as m
from tests.console.repair import test_actions, test_four_eyes

# The one action that changes nothing in the WMS: rejecting a proposal.
CHANGES_NOTHING = {"CANCEL_REJECT"}
SPECS = registry.SPECS
CODES = [s.code for s in SPECS]


def chinese(text) -> str:
    with translation.override("zh-hans"):
        return str(text)


def english(text) -> str:
    with translation.override("en"):
        return str(text)


def covered_actions() -> set[str]:
    """The actions whose applied path a test covers (tests.repair_support.covers)."""
    found = set()
    for module in (test_actions, test_four_eyes):
        for name, test in vars(module).items():
            if name.startswith("test_") and callable(test):
                found |= set(getattr(test, "repair_actions", ()))
    return found


def test_codes_and_slugs_are_unique_and_name_the_vocabulary():
    assert len(set(CODES)) == len(CODES)
    assert len({s.slug for s in SPECS}) == len(SPECS)
    assert [a.value for a in registry.RepairAction] == CODES
    assert all(len(code) <= 32 for code in CODES)  # RepairAudit.action
    assert {s.slug: s.code for s in SPECS if s.offered} == registry.ACTIONS_BY_SLUG
    assert set(registry.OFFERED) == {s.code for s in SPECS if s.offered}


@pytest.mark.parametrize("code", CODES)
def test_every_action_has_a_mutation_of_the_wms_layer(code):
    spec = registry.spec(code)
    if code in CHANGES_NOTHING:
        assert spec.mutation is None
        return
    assert callable(spec.mutation), f"{code} has no mutation"
    assert inspect.getmodule(spec.mutation) is m  # every WMS mutation lives in recovery.engine.transaction
    assert "payload" in inspect.signature(spec.mutation).parameters
    assert registry.MUTATIONS[code] is spec.mutation


@pytest.mark.parametrize("code", CODES)
def test_every_action_has_a_form_and_reason_codes(code):
    spec = registry.spec(code)
    assert spec.reason_codes, f"{code} allows no reason code"
    pause_reasons = [None, *[r.value for r in Reason]]
    assert any(RepairForm(action=code, pause_reason=r).fields["reason_code"].widget.choices[1:]
               for r in pause_reasons)
    form = RepairForm(action=code, pause_reason=None)
    assert {"reason_code", "reason_text"} <= set(form.fields)
    assert ({"tray_code", "space_code"} <= set(form.fields)) == (spec.scans is not None)
    assert not {"tray_code", "space_code"} & set(RepairForm(action=code, pause_reason=None, scans=False).fields)


@pytest.mark.parametrize("code", [s.code for s in SPECS if s.offered])
def test_every_offered_action_is_routed_by_its_slug(code):
    spec = registry.spec(code)
    for name in ("repair-form", "repair-preview", "repair-apply"):
        match = resolve(reverse(name, args=[1, spec.slug]))
        assert match.kwargs["slug"] == spec.slug
    assert views._action(spec.slug) == code


def test_every_action_has_a_test_of_its_applied_path():
    missing = set(CODES) - covered_actions()
    assert missing == set(), f"no test covers {sorted(missing)}"


@pytest.mark.parametrize("code", CODES)
def test_every_label_is_translated(code):
    spec = registry.spec(code)
    texts = [spec.label, spec.family.label, spec.family.effect, spec.family.role,
             *(c.label for c in spec.reason_codes)]
    if spec.scans is not None and spec.scans.instruction:
        texts.append(spec.scans.instruction)
    untranslated = [english(text) for text in texts if chinese(text) == english(text)]
    assert untranslated == []


def test_its_own_refusals_are_translated():
    for spec in SPECS:
        for text in (spec.forbidden, spec.stale):
            assert chinese(translation.gettext_lazy(text)) != text


def test_every_correction_of_the_runbook_is_a_family_of_the_registry():
    assert set(registry.FAMILIES) == set(Correction)
    assert {s.family.correction for s in SPECS} == set(Correction)
    for spec in SPECS:
        assert registry.FAMILIES[spec.family.correction] is spec.family


@pytest.mark.parametrize("reason", list(CATALOG))
def test_every_correction_the_runbook_allows_is_offered_with_a_reason_code(reason):
    for allowed in CATALOG[reason].allowed:
        offering = [s.code for s in SPECS if s.offered and s.family.correction == allowed.correction
                    and s.codes_for(reason.value)]
        assert offering, f"the runbook allows {allowed.correction} for {reason.value}; no action offers it"


def test_the_audit_keeps_what_an_action_scans():
    for spec in SPECS:
        request = RepairRequest(spec.code, 1, tray_code="T1", space_code="S1")
        assert bool(registry.inputs(request)) == (spec.scans is not None)
        empty = RepairRequest(spec.code, 1)
        assert bool(registry.inputs(empty)) == (spec.scans is not None and not spec.scans.while_moving)


def test_the_sentence_ids_are_declared_with_their_placeholders():
    ids = [v for k, v in vars(t).items() if k.isupper() and isinstance(v, str)]
    ids += [v for k, v in vars(m).items() if k.isupper() and isinstance(v, str) and " " in v]
    for text in ids:
        assert chinese(translation.gettext_lazy(text)) != text, text


def test_each_action_says_whether_it_resolves_a_pause():
    # Applied, these resume or cancel the workflow; a proposal and a rejection leave it paused.
    assert registry.resolving_actions() == ["RECHECK", "REISSUE", "RECONCILE_SOURCE", "RECONCILE_TARGET",
                                            "CANCEL_APPROVE"]
    assert "resolves_pause" not in {f.name for f in fields(registry.ActionSpec) if f.default is not MISSING}


def test_the_readme_table_is_the_specs_rows():
    readme = (Path(__file__).resolve().parents[3] / "docs" / "user-guide.md").read_text()
    rows = [line for line in readme.splitlines() if re.match(r"^\| `[A-Z_]+` \|", line) and line.count("|") == 5]
    assert [spec.guide_row() for spec in SPECS] == [r for r in rows if r.split("`")[1] in registry.BY_CODE], (
        "the user guide's repair-action table differs from the specs: copy each spec's guide_row()")
    assert all(spec.offered_when.strip() and spec.does.strip() for spec in SPECS), "a spec has no user guide cells"
