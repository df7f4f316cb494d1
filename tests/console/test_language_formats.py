"""Ages, durations, dates and numbers in the request's language (console/templatetags/console_tags.py),
and the pages whose formatting lives there (dashboard, rack map, sign-in) with no English left in
zh-Hans. English output is unchanged: the other tests assert it."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import AnonymousUser
from django.template import Context, Template
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone, translation

from console.readers.paused import PausedRow
from console.templatetags.console_tags import (
    age,
    clock,
    duration,
    format_duration,
    milliseconds,
    number,
    origin_label,
    reason_link,
    role_labels,
    when,
    when_ahead,
    yesno_text,
)
from recovery.engine.cycle import run_cycle
from recovery.models import RecoveryCycle
from tests.visible_text import english_left

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

ZH = {"Accept-Language": "zh-Hans"}

DURATIONS = [
    (timedelta(seconds=45), "45 s", "45 秒"),
    (timedelta(minutes=12, seconds=5), "12 min", "12 分钟"),
    (timedelta(hours=3, minutes=5), "3 h 05 min", "3 小时 05 分钟"),
    (timedelta(days=2, hours=4), "2 d 4 h", "2 天 4 小时"),
    # Django's zh-Hans number format has no thousands separator.
    (timedelta(days=1234), "1,234 d 0 h", "1234 天 0 小时"),
    (timedelta(minutes=-3), "-3 min", "-3 分钟"),
    (None, "—", "—"),
]


@pytest.mark.parametrize("delta,english,chinese", DURATIONS)
def test_it_writes_durations_in_the_language(delta, english, chinese):
    with translation.override("en"):
        assert format_duration(delta) == english
    with translation.override("zh-hans"):
        assert format_duration(delta) == chinese


def test_the_duration_filter_takes_seconds_and_the_age_filter_a_time():
    with translation.override("zh-hans"):
        assert duration(90) == "1 分钟"
        assert duration(30.0) == "30 秒"
        assert age(timezone.now() - timedelta(hours=1, minutes=2)) == "1 小时 02 分钟"
        assert age(None) == "—"
    with translation.override("en"):
        assert duration(90) == "1 min" and age(timezone.now() - timedelta(seconds=5)) in ("5 s", "6 s")


def test_a_time_today_shows_the_clock_and_how_long_ago():
    value = timezone.now() - timedelta(minutes=5)
    clock = timezone.localtime(value).strftime("%H:%M:%S")
    with translation.override("en"):
        html = when(value)
        assert f">{clock} <span class=\"ago\">(5 min ago)</span></time>" in html
        assert when(value, "age").endswith(">5 min ago</time>")
    with translation.override("zh-hans"):
        html = when(value)
        assert f">{clock} <span class=\"ago\">（5 分钟前）</span></time>" in html
        assert when(value, "age").endswith(">5 分钟前</time>")
        assert english_left(html) == []


def test_a_time_on_another_day_names_the_month_in_the_language():
    value = timezone.now() - timedelta(days=40)
    local = timezone.localtime(value)
    with translation.override("en"):
        assert f">{local.strftime('%d %b %H:%M')} <span class=\"ago\">(40 d 0 h ago)</span>" in when(value)
    with translation.override("zh-hans"):
        html = when(value)
        day = f"{local.month}月{local.day}日 {local.strftime('%H:%M')}"
        assert f'>{day} <span class="ago">（40 天 0 小时前）</span>' in html
        assert english_left(html) == []
        # The exact time on hover stays ISO: it reads the same in every language.
        assert f'title="{local.strftime("%Y-%m-%d %H:%M:%S")}' in html


def test_a_time_ahead_says_how_long_is_left_and_a_clock_time_says_no_age():
    value = timezone.now() + timedelta(hours=5, minutes=30)
    local = timezone.localtime(value)
    shown = local.strftime("%H:%M:%S") if local.date() == timezone.localdate() else local.strftime("%d %b %H:%M")
    tag = f'<time datetime="{value.isoformat()}" title="{local.strftime("%Y-%m-%d %H:%M:%S %Z")}">{shown}'
    with translation.override("en"):
        assert when_ahead(value) in (f'{tag} <span class="ago">(in 5 h 30 min)</span></time>',
                                     f'{tag} <span class="ago">(in 5 h 29 min)</span></time>')
        assert clock(value) == f"{tag}</time>"
        passed = timezone.now() - timedelta(minutes=5)
        assert when_ahead(passed) == when(passed)  # once passed, an age like any other time
        assert when_ahead(None) == clock(None) == '<span class="muted">never</span>'
    with translation.override("zh-hans"):
        assert clock(None) == '<span class="muted">从未</span>'


def test_never_and_no_reason_are_said_in_the_language():
    with translation.override("en"):
        assert when(None) == '<span class="muted">never</span>'
        assert reason_link(None) == '<span class="muted">none</span>'
        assert 'title="Not in the catalog"' in reason_link("SOMETHING_ELSE")
    with translation.override("zh-hans"):
        assert when(None) == '<span class="muted">从未</span>'
        assert reason_link(None) == '<span class="muted">无</span>'
        html = reason_link("SOMETHING_ELSE")
        assert 'title="不在原因码目录中"' in html and "<code>SOMETHING_ELSE</code>" in html


@pytest.mark.parametrize("value,english,chinese", [
    (0, "0 ms", "0 毫秒"), (40, "40 ms", "40 毫秒"), (12345, "12,345 ms", "12345 毫秒"), (None, "—", "—")])
def test_milliseconds_are_grouped_and_named_in_the_language(value, english, chinese):
    with translation.override("en"):
        assert milliseconds(value) == english
    with translation.override("zh-hans"):
        assert milliseconds(value) == chinese


def test_numbers_follow_the_language_format():
    with translation.override("en"):
        assert (number(20000), number(7), number(None), number(2.5)) == ("20,000", "7", "—", "2.5")
    with translation.override("zh-hans"):
        assert (number(20000), number(7), number(None), number(2.5)) == ("20000", "7", "—", "2.5")
    with translation.override("en"):
        assert Template("{% load console_tags %}{{ n|number }}").render(Context({"n": 1234567})) == "1,234,567"


def test_roles_origins_and_yes_no_are_words_of_the_language():
    with translation.override("en"):
        assert role_labels(["operator", "shift lead"]) == "operator, shift lead"
        assert origin_label("AUTOMATIC") == "Automatic" and origin_label("MANUAL") == "Manual"
        assert (yesno_text(True), yesno_text(False)) == ("yes", "no")
    with translation.override("zh-hans"):
        assert role_labels(["operator", "shift lead"]) == "操作员、班组长"
        assert role_labels(["supervisor"]) == "主管" and role_labels(["admin"]) == "管理员"
        assert origin_label("AUTOMATIC") == "自动" and origin_label("MANUAL") == "手动"
        assert (yesno_text(True), yesno_text(False)) == ("是", "否")


def _rows():
    now = timezone.now()
    return [
        PausedRow(7, "AUTOMATIC", "NOT_IN_THE_CATALOG", now - timedelta(minutes=3), now - timedelta(hours=1), 2, 1,
                  "T-7", "A01-01-01", "A01-01-02"),
        PausedRow(8, "MANUAL", None, now - timedelta(days=3), now - timedelta(days=4), 0, None, None, None, None),
    ]


def paused_rows(rows) -> str:
    """The paused list's rows, as its partial renders them."""
    return render_to_string("workflows/paused_list.html#paused-rows", {"page": {"rows": rows}})


def test_the_paused_rows_speak_the_language():
    with translation.override("en"):
        english = paused_rows(_rows())
    assert '<td data-label="Paused step">step 1: tray <code>T-7</code> <code>A01-01-01</code> → ' in english
    assert '<span class="muted">all steps completed</span>' in english and "(3 min ago)" in english
    assert ">Automatic<" in english and ">Manual<" in english
    with translation.override("zh-hans"):
        chinese = paused_rows(_rows())
    assert english_left(f"<table>{chinese}</table>") == []
    assert '<td data-label="暂停的步骤">第 1 步：托盘 <code>T-7</code> <code>A01-01-01</code> → ' in chinese
    assert "所有步骤已完成" in chinese and "（3 分钟前）" in chinese and ">自动<" in chinese
    assert 'data-label="Workflow"' not in chinese


# --- pages ---------------------------------------------------------------------------------------


def _cycle(age_seconds: float, outcome="SUCCEEDED", **kw) -> RecoveryCycle:
    finished = timezone.now() - timedelta(seconds=age_seconds)
    return RecoveryCycle.objects.create(started_at=finished - timedelta(milliseconds=1250), finished_at=finished,
                                        outcome=outcome, duration_ms=1250, **kw)


def _dashboard(client) -> str:
    response = client.get(reverse("dashboard"), headers=ZH)
    assert response.status_code == 200
    return response.content.decode()


def test_the_empty_dashboard_has_no_english_left(supervisor_client):
    html = _dashboard(supervisor_client)
    assert english_left(html, allow={"supervisor"}) == []
    assert "尚无" in html and "主管" in html  # no successful cycle yet; the role in the header
    assert "Recovery is stale." not in html


def test_the_dashboard_with_cycles_speaks_chinese_in_every_banner(supervisor_client):
    _cycle(3600)  # stale
    html = _dashboard(supervisor_client)
    assert '<div class="banner stale" role="alert">' in html and english_left(html, allow={"supervisor"}) == []
    assert "1250 毫秒" in html and "1 小时 00 分钟前" in html and "<code>qcluster</code>" in html

    _cycle(2, backlog=3)  # on time, draining a backlog
    html = _dashboard(supervisor_client)
    assert '<div class="banner warnbox" role="status">' in html and english_left(html, allow={"supervisor"}) == []
    assert "1250 毫秒" in html and "秒前" in html

    _cycle(1, outcome="FAILED", error_text="")  # the latest failed, the previous one succeeded
    html = _dashboard(supervisor_client)
    assert '<div class="banner warnbox" role="status">' in html and english_left(html, allow={"supervisor"}) == []
    assert "1,250 ms" in supervisor_client.get(reverse("dashboard")).content.decode()


def test_the_dashboard_with_paused_and_active_work_speaks_chinese(supervisor_client, wms):
    wms.build("healthy")
    # A code outside the catalogue: the catalogue's own titles are tested with the reason-code page.
    wms.build("paused", reason="OPERATOR_HOLD")
    run_cycle()
    html = _dashboard(supervisor_client)
    assert "OPERATOR_HOLD" in html and "按原因码统计的暂停" in html and 'title="不在原因码目录中"' in html
    assert english_left(html, allow={"supervisor"}) == []


@pytest.fixture
def floor(wms):
    from django.db import connection

    paused = wms.build("paused")
    wms.build("healthy")
    wms.stocked_tray()
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO bas_cargo_space (cargo_space_id, tray_code) VALUES ('DOCK-1', 'T-DOCK')")
    return paused


@pytest.mark.parametrize("query", ["", "?view=table", "?aisle=A01", "?state=paused", "?aisle=ZZ9", "?state=bogus"])
def test_the_rack_map_has_no_english_left(supervisor_client, floor, query):
    response = supervisor_client.get(reverse("rack-map") + query, headers=ZH)
    html = response.content.decode()
    assert response.status_code == (400 if "bogus" in query or "ZZ9" in query else 200)
    assert english_left(html, allow={"supervisor", "bogus"}) == []
    assert "货位图" in html
    if not query:
        assert f"被暂停的工作流 #{floor.workflow_id} 锁定" in html or "暂停" in html


def test_the_sign_in_page_and_a_failed_sign_in_have_no_english_left(client, personas):
    html = client.get(reverse("login"), headers=ZH).content.decode()
    assert english_left(html) == [] and "登录" in html
    response = client.post(reverse("login"), {"username": "supervisor", "password": "wrong"}, headers=ZH)
    assert english_left(response.content.decode(), allow={"supervisor"}) == []


def test_anonymous_people_get_the_default_language():
    from console.languages import preferred_language

    assert preferred_language(AnonymousUser()) == "en"
    assert preferred_language(None) == "en"
