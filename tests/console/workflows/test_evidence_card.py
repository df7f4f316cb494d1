"""The evidence card: for every pause row of the decision table, exactly the fields that
disagree are highlighted, and the decisive ones carry the rule that produced the reason."""

import pytest
from django.db import connection

from console.workflows.evidence_card import Check, ExpectedState, build_evidence_card, table_decision
from recovery.demo.warehouse import CASES, EXPECTED
from recovery.engine.cycle import run_cycle
from recovery.engine.decisions import SPEC_BY_RULE, Action, Reason, Rule
from recovery.engine.evidence import evidence_for_workflow, evidence_from_json
from recovery.models import RecoveryDecision

SPACES = ("stock.at_source", "stock.at_target", "source.tray", "target.tray")

# kind -> (rule that decides, the mismatching fields, all of them decisive)
PAUSES = {
    "completed_job_active": (Rule.COMPLETED_WITH_ACTIVE_JOB, {"workflow.active_jobs"}),
    "active_not_pre_move": (Rule.ACTIVE_JOB_NOT_PRE_MOVE, set(SPACES)),
    "active_bad_status": (Rule.ACTIVE_JOB_BAD_STATUS, {"active.status"}),
    "active_mismatch": (Rule.ACTIVE_JOB_MISMATCH, {"active.tray_code"}),
    "finish_mismatch": (Rule.FINISH_JOB_MISMATCH, {"finish.target_cargo_space_id"}),
    "active_and_finished": (Rule.ACTIVE_AND_FINISHED, {"active.present", "finish.present"}),
    "finish_not_terminal": (Rule.FINISH_JOB_NOT_TERMINAL, set(SPACES)),
    "finish_bad_status": (Rule.FINISH_JOB_NOT_TERMINAL, {"finish.status"}),
    "finish_duplicated": (Rule.FINISH_JOB_DUPLICATED, {"finish.count"}),
    "job_missing": (Rule.NO_JOB, {"active.present", "finish.present"}),
    "wcs_report_mismatch": (Rule.WCS_REPORT_MISMATCH, {"wcs_report.tray"}),
}
PAUSE_KINDS = sorted(k for k, (action, _) in EXPECTED.items() if action == "PAUSE")


def test_the_table_spells_out_every_pause_kind_of_the_demo():
    # A new pause reason's demo kind needs its row above (docs/development.md, "How to add things").
    assert sorted(PAUSES) == PAUSE_KINDS


@pytest.mark.parametrize("kind", PAUSE_KINDS)
def test_every_pause_kind_names_its_rule_and_only_fields_that_rule_checks(wms, kind):
    # For every kind the warehouse builds (PAUSES above spells out the fields of each one known
    # today): the card decides by the kind's rule, and every disagreement names the rule whose
    # spec checks that field in the card's expected state.
    card = build_evidence_card(evidence_for_workflow(wms.build(kind).workflow_id))
    facts = SPEC_BY_RULE[CASES[kind]].facts.checked(card.expected_state)
    assert card.rule is CASES[kind]
    assert card.decisive_fields and {f.key for f in card.decisive_fields} <= set(facts)
    for f in card.mismatches:
        assert f.rule is not None and f.key in SPEC_BY_RULE[f.rule].facts.checked(card.expected_state), f.key


@pytest.mark.parametrize("kind", sorted(PAUSES))
def test_it_highlights_exactly_the_fields_behind_the_pause(wms, kind):
    built = wms.build(kind)
    rule, fields = PAUSES[kind]
    card = build_evidence_card(evidence_for_workflow(built.workflow_id))

    assert card.rule is rule
    assert card.reason == EXPECTED[kind][1]
    assert {f.key for f in card.mismatches} == fields
    assert {f.key for f in card.decisive_fields} == fields
    assert all(f.rule is rule and f.check is Check.MISMATCH for f in card.mismatches)


def test_it_shows_what_the_table_says_for_a_paused_workflow_not_just_leave(wms):
    built = wms.build("job_missing")
    run_cycle()
    evidence = evidence_for_workflow(built.workflow_id)
    assert evidence.workflow_status == "PAUSED_RECOVERY"

    card = build_evidence_card(evidence)
    assert (card.decision.action, card.rule, card.reason) == (Action.PAUSE, Rule.NO_JOB, Reason.JOB_MISSING.value)


@pytest.mark.parametrize("kind,action,state", [
    ("healthy", Action.LEAVE, ExpectedState.PRE_MOVE),
    ("finish_terminal", Action.ADVANCE, ExpectedState.TERMINAL),
])
def test_it_has_no_mismatch_when_the_evidence_is_consistent(wms, kind, action, state):
    built = wms.build(kind)
    card = build_evidence_card(evidence_for_workflow(built.workflow_id))
    assert card.decision.action is action
    assert card.expected_state is state
    assert card.mismatches == []
    assert card.field("stock.at_source").check is Check.OK


def test_it_names_expected_and_observed_values(wms):
    built = wms.build("active_mismatch")
    mv = built.moves[0]
    card = build_evidence_card(evidence_for_workflow(built.workflow_id))
    tray = card.field("active.tray_code")
    assert tray.expected == mv.tray_code
    assert tray.observed != mv.tray_code and tray.observed.startswith("T")
    assert card.field("active.cargo_space_id").observed == mv.source
    assert card.field("active.cargo_space_id").check is Check.OK


def test_it_marks_what_changed_since_the_journaled_evidence(wms):
    built = wms.build("active_not_pre_move")
    run_cycle()
    journaled = evidence_from_json(RecoveryDecision.objects.get(workflow_id=built.workflow_id).evidence)
    same = build_evidence_card(evidence_for_workflow(built.workflow_id), baseline=journaled)
    assert same.changed_fields == []  # pausing itself (step status) is not a change

    mv = built.moves[0]
    with connection.cursor() as cursor:  # someone puts the tray back at the source in the WMS
        cursor.execute("UPDATE bas_stock SET cargo_space_id = %s WHERE tray_code = %s", [mv.source, mv.tray_code])
        cursor.execute("UPDATE bas_cargo_space SET tray_code = %s WHERE cargo_space_id = %s", [mv.tray_code, mv.source])
        cursor.execute("UPDATE bas_cargo_space SET tray_code = NULL WHERE cargo_space_id = %s", [mv.target])
    now = build_evidence_card(evidence_for_workflow(built.workflow_id), baseline=journaled)

    assert {f.key for f in now.changed_fields} == {*SPACES, "stock.locations"}
    assert now.mismatches == []
    assert table_decision(evidence_for_workflow(built.workflow_id)).action is Action.LEAVE


# The tables as the first template loop wrote them (lines broken between tags; the comparison
# ignores whitespace beside tags): the evidence card's partial must give the same markup, field
# for field, in every language.
TEMPLATE_LOOP = """{% load i18n %}{% for section in card.sections %}
  <div class="table-wrap">
  <table class="evidence-table">
    <caption>{{ section.title }} <code class="table-name">{{ section.table }}</code></caption>
    <thead><tr><th scope="col">{% translate "Field" %}</th>
      <th scope="col">{% translate "Expected (from the step)" %}</th>
      <th scope="col">{% translate "Observed" %}</th></tr></thead>
    <tbody>
    {% for f in section.fields %}
      <tr class="check-{{ f.check }}{% if f.decisive %} decisive{% endif %}{% if f.changed %} changed{% endif %}"
          data-field="{{ f.key }}">
        <th scope="row">{{ f.label }}</th>
        <td>{{ f.expected }}</td>
        <td>
          {% if f.mismatch %}<span class="flag" aria-hidden="true">✗</span>
            <span class="visually-hidden">{% translate "Mismatch:" %} </span>
          {% elif f.check == "ok" %}<span class="okmark" aria-hidden="true">✓</span> {% endif %}
          <strong>{{ f.observed }}</strong>
          {% if f.changed %}<span class="badge changed-badge">{% translate "changed" %}</span>{% endif %}
          {% if f.mismatch %}<div class="why">
            {% if f.decisive %}<strong>{% translate "Produced this decision" %}</strong> — {% endif %}
            {% translate "rule" %} <code>{{ f.rule }}</code>: {{ f.rule_explanation }}</div>{% endif %}
        </td>
      </tr>
    {% endfor %}
    </tbody>
  </table>
  </div>
  {% endfor %}"""


def _markup(html: str) -> str:
    import re

    return re.sub(r">\s+", ">", re.sub(r"\s+<", "<", re.sub(r"\s+", " ", html))).strip()


def test_the_evidence_tables_partial_writes_what_the_template_loop_wrote(wms):
    from django.template import Context, Template
    from django.template.loader import render_to_string
    from django.utils import translation

    def evidence_tables(card):
        return render_to_string("workflows/_evidence_card.html#evidence-tables", {"card": card})

    cards = []
    for kind in (*sorted(PAUSES), "healthy", "finish_terminal", "completed"):
        built = wms.build(kind)
        cards.append(build_evidence_card(evidence_for_workflow(built.workflow_id)))
    built = wms.build("active_not_pre_move")
    run_cycle()
    journaled = evidence_from_json(RecoveryDecision.objects.get(workflow_id=built.workflow_id).evidence)
    with connection.cursor() as cursor:  # a hostile tray code, and a change since the pause
        cursor.execute("UPDATE bas_cargo_space SET tray_code = %s WHERE cargo_space_id = %s",
                       ['<script>"x"&</script>', built.moves[0].target])
    cards.append(build_evidence_card(evidence_for_workflow(built.workflow_id), baseline=journaled))
    assert any(f.changed for f in cards[-1].changed_fields) and any(c.mismatches for c in cards)

    loop = Template(TEMPLATE_LOOP)
    for language in ("en", "zh-hans"):
        with translation.override(language):
            for card in cards:
                expected = loop.render(Context({"card": card}))
                assert _markup(evidence_tables(card)) == _markup(expected), (language, card.workflow_id)
    assert "&lt;script&gt;&quot;x&quot;&amp;&lt;/script&gt;" in evidence_tables(cards[-1])
    with translation.override("zh-hans"):  # the partial's own texts are in the catalogue
        chinese = evidence_tables(cards[-1]) + "".join(evidence_tables(c) for c in cards if c.mismatches)
    for english in ("Field", "Expected (from the step)", "Observed", "Mismatch:", ">changed<",
                    "Produced this decision", "rule <code>"):
        assert english not in chinese, english
