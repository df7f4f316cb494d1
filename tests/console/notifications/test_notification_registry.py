"""The notification events are declared once (docs/architecture.md §12, §14): every spec is
complete (texts, a Chinese translation of each, a reader of its causes, a real threshold setting),
and what derives from the specs (the event filter, the metrics' labels, the user guide's table) holds
exactly the specs' events."""

import inspect
import re
from pathlib import Path

import polib
from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext

from console.models import Severity
from console.notifications.events import EVENTS, SPECS, Event
from console.notifications.forms import NotificationFilterForm
from console.notifications.selectors import open_notification_counts

ROOT = Path(__file__).resolve().parents[3]
PO = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
EVENT_CODE = re.compile(r"^[a-z][a-z_]{2,31}$")


def _translated() -> dict[str, str]:
    po = polib.pofile(str(PO))
    return {e.msgid: e.msgstr for e in po if not e.obsolete and not e.fuzzy and not e.msgctxt and e.msgstr}


def test_every_spec_is_complete():
    assert len(EVENTS) == len(SPECS), "two specs share an event code"
    for spec in SPECS:
        assert EVENT_CODE.match(spec.event), spec.event
        assert spec.severity in Severity.values, spec.event
        assert all(text.strip() for text in spec.message_ids()), f"{spec.event}: a text is empty"
        assert callable(spec.causes) and list(inspect.signature(spec.causes).parameters) == ["now"], spec.event
        assert spec.opens_when.strip() and spec.resolves_when.strip(), f"{spec.event}: no user guide cells"
        if spec.threshold_setting:
            assert isinstance(getattr(settings, spec.threshold_setting, None), int), spec.threshold_setting


def test_every_text_of_every_spec_has_a_chinese_translation():
    ids = [text for spec in SPECS for text in spec.message_ids()]
    translated = _translated()
    assert [t for t in ids if t not in translated] == [], "no non-fuzzy zh-Hans translation in django.po"
    with translation.override("zh-hans"):  # and the compiled catalogue has them
        assert [t for t in ids if gettext(t) == t] == []


def test_every_text_takes_its_values_by_name():
    """Only `%(name)s` values (what a notification keeps): a translation may put them in any order."""
    for spec in SPECS:
        for text in spec.message_ids()[1:]:
            assert "%(" in text or "%" not in text, spec.event
            assert not re.search(r"%[^(%]", text), f"{spec.event}: a positional value in {text!r}"


def test_the_filter_the_metrics_and_the_readme_derive_from_the_specs(notify_db):
    events = [spec.event for spec in SPECS]
    assert list(Event.values) == events
    assert [value for value, _ in NotificationFilterForm().fields["event"].choices][1:] == events
    assert list(open_notification_counts()) == events
    readme = (ROOT / "docs" / "user-guide.md").read_text()
    rows = [line for line in readme.splitlines() if re.match(r"^\| `[a-z_]+` \|", line) and line.count("|") == 5]
    assert [spec.guide_row() for spec in SPECS] == [r for r in rows if r.split("`")[1] in EVENTS], (
        "the user guide's event table differs from the specs: copy each spec's guide_row()")
    assert {r.split("`")[1] for r in rows} >= set(events)



def test_the_thresholds_page_lists_every_spec_with_a_threshold_setting(client, notify_db, settings):
    from tests.console_personas import make_user

    settings.STALLED_AFTER_MINUTES = 22
    client.force_login(make_user("otto", "operator"))
    html = client.get("/notifications/thresholds/").content.decode()
    table = html[html.index('id="setting-thresholds"'):]
    rows = re.findall(r'translate="no">([a-z_]+)</span></td><td data-label="Setting" class="chip-code" '
                      r'translate="no">([A-Z_]+)</td><td data-label="Minutes" class="num">(\d+)<', table)
    assert rows == [(spec.event, spec.threshold_setting, str(getattr(settings, spec.threshold_setting)))
                    for spec in SPECS if spec.threshold_setting]
    assert ("stalled", "STALLED_AFTER_MINUTES", "22") in rows
