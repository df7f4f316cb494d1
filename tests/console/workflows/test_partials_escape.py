"""The paused list's rows and the evidence card's tables are template partials
(workflows/paused_list.html#paused-rows, workflows/_evidence_card.html#evidence-tables) escaped by
Django's autoescape: a hostile tray code, cargo space or reason code, as a WMS or a hand-edited row
may hold, is shown as text and never becomes markup, in the partial alone and on the page."""

from datetime import timedelta

from django.db import connection
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.html import escape

from console.readers.paused import PausedRow
from console.workflows.evidence_card import CardField, CardSection, Check
from recovery.engine.cycle import run_cycle
from recovery.engine.decisions import Rule

HOSTILE = """<script>alert("x")</script>'&"""
ESCAPED = escape(HOSTILE)  # &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#x27;&amp;
HX = {"HX-Request": "true"}


def rows_partial(rows) -> str:
    return render_to_string("workflows/paused_list.html#paused-rows", {"page": {"rows": rows}})


def tables_partial(sections) -> str:
    return render_to_string("workflows/_evidence_card.html#evidence-tables", {"card": {"sections": sections}})


def test_a_hostile_tray_space_and_reason_stay_text_in_the_paused_rows(supervisor_client, wms):
    now = timezone.now()
    row = PausedRow(7, "AUTOMATIC", HOSTILE, now - timedelta(minutes=3), now - timedelta(hours=1), 2, 1,
                    HOSTILE, HOSTILE, HOSTILE)
    for language in ("en", "zh-hans"):
        with translation.override(language):
            html = rows_partial([row])
        assert HOSTILE not in html and "<script" not in html, language
        # The reason in the catalog link and in its <code>; the tray, source and target.
        assert html.count(ESCAPED) == 5, language
        assert f'<a class="reason" href="/reason-codes/#{ESCAPED}" title="' in html
        assert f"<code>{ESCAPED}</code> <code>{ESCAPED}</code> → <code>{ESCAPED}</code>" in html

    built = wms.build("paused", reason=HOSTILE)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE alg.tidy_step SET tray_code = %s WHERE workflow_id = %s", [HOSTILE, built.workflow_id])
    fragment = supervisor_client.get(reverse("paused-workflows"), headers=HX).content.decode()
    assert HOSTILE not in fragment and "<script" not in fragment
    assert f"#{built.workflow_id}</a>" in fragment
    assert f'<a class="reason" href="/reason-codes/#{ESCAPED}"' in fragment
    assert f"tray <code>{ESCAPED}</code>" in fragment


def test_a_hostile_field_stays_text_in_the_evidence_tables(supervisor_client, wms):
    field = CardField(key=HOSTILE, label=HOSTILE, expected=HOSTILE, observed=HOSTILE, check=Check.MISMATCH,
                      rule=Rule.NO_JOB, decisive=True, changed=True)
    section = CardSection(title=HOSTILE, table=HOSTILE, fields=(field,))
    for language in ("en", "zh-hans"):
        with translation.override(language):
            html = tables_partial([section])
        assert HOSTILE not in html and "<script" not in html, language
        # The section's title and table; the field's key, label, expected and observed values.
        assert html.count(ESCAPED) == 6, language
        assert f'data-field="{ESCAPED}"' in html and f"<strong>{ESCAPED}</strong>" in html

    built = wms.build("active_not_pre_move")
    run_cycle()  # pauses it: the tray is at the target, the job still active
    with connection.cursor() as cursor:  # a hostile tray code where the move should have left it
        cursor.execute("UPDATE bas_cargo_space SET tray_code = %s WHERE cargo_space_id = %s",
                       [HOSTILE, built.moves[0].target])
    page = supervisor_client.get(reverse("workflow-detail", args=[built.workflow_id])).content.decode()
    assert HOSTILE not in page and "<script>alert" not in page
    assert f"<strong>{ESCAPED}</strong>" in page
