"""CSV cells a spreadsheet would run as formulas are exported as text (leading apostrophe)."""

import csv
import io
from datetime import datetime

import pytest
from django.urls import reverse

from console.csv_safe import safe_cell, safe_row
from console.models import RepairAudit


@pytest.mark.parametrize("text", ['=HYPERLINK("http://evil.example","x")', "+1+1", "-2+3", "@SUM(A1)",
                                  "\t=1+1", "\r=1+1", "=", "-",
                                  # Spreadsheets skip leading white space before looking for a formula.
                                  " =1", "\n=1+1", "\r\n=cmd", "  \n\t @SUM(A1)", "\u00a0+1", "\u3000-1", "\x0b=1"])
def test_it_makes_formula_text_inert(text):
    assert safe_cell(text) == "'" + text


@pytest.mark.parametrize("value", ["Job vanished at 02:10", " x=1", "\nnote", "", "   ", "a=b", "'quoted", 42, -3,
                                   1.5, None, True, datetime(2026, 12, 1, 2, 10)])
def test_it_leaves_other_cells_alone(value):
    assert safe_cell(value) == value


def test_it_escapes_each_cell_of_a_row():
    assert safe_row(["=1", 5, "ok", "@x"]) == ["'=1", 5, "ok", "'@x"]


def test_the_audit_export_never_hands_a_formula_to_a_spreadsheet(client, personas):
    RepairAudit.objects.create(username="=cmd|' /C calc'!A0", action="REISSUE", outcome="REFUSED:REASON_TOO_SHORT",
                               reason_code="JOB_LOST_AT_RESTART", reason_text='=HYPERLINK("http://evil.example","ok")',
                               message="+44 rings back", workflow_id=-7)
    client.force_login(personas["supervisor"])
    response = client.get(reverse("repair-audit-csv"))
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert len(rows) == 1
    assert rows[0]["reason_text"] == '\'=HYPERLINK("http://evil.example","ok")'
    assert rows[0]["username"] == "'=cmd|' /C calc'!A0"
    assert rows[0]["outcome"] == "REFUSED:REASON_TOO_SHORT"
    assert rows[0]["message"] == "'+44 rings back"
    assert rows[0]["workflow_id"] == "-7"  # a number stays a number: a spreadsheet reads it, never runs it
