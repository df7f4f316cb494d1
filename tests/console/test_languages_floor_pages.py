"""The floor pages speak zh-Hans completely: search, shift handover, recovery cycles, flow health,
security, and the 4xx messages of the console's input checks. Each page is rendered in Chinese in
every state that shows different text, and nothing English is left in what a reader sees except
codes and the data the test itself wrote; the English rendering still works. The WCS API's JSON
error bodies stay English whatever language the request asks for: a machine reads them."""

import json
from datetime import timedelta

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone, translation

from console.input_checks import InputRefused, ascii_int, safe_text
from console.models import CancelProposal, Notification, NotificationAcknowledgement, RepairAudit, WorkflowNote
from console.roles import OPERATOR, SHIFT_LEAD
from console.runbook import CATALOG
from recovery.engine.cycle import run_cycle
from recovery.models import RecoveryCycle
from tests.console_personas import make_user
from tests.visible_text import english_left
from tests.wcs_helpers import post

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

ZH = {"Accept-Language": "zh-Hans"}
EN = {"Accept-Language": "en"}
# Words the `when`, `age` and `duration` filters of console/templatetags/console_tags.py still
# write in English ("5 min ago", "1 h 30 min", "never"): the filters are translated there, not in
# these pages. Drop this set once they speak zh-Hans.
FILTER_WORDS = {"ago", "min", "h", "s", "d", "never", "none"}
# Data: the personas' user names, and the product name qcluster, which the glossary keeps in
# every language.
ALLOW = FILTER_WORDS | {"supervisor", "operator", "shiftlead", "norole", "qcluster"}
# Shown by templates/base.html in every page's header (the signed-in person's group names).
ROLE_NAMES = {"supervisor", "operator", "shift lead"}


def left_on(html: str, allow=()) -> list[str]:
    """english_left, without the header's role names and the reason links' titles (the runbook's
    titles, console/runbook.py): those are translated with the pages that own them."""
    titles = {str(entry.title) for entry in CATALOG.values()}
    return [part for part in english_left(html, allow=ALLOW | set(allow)) if part not in titles | ROLE_NAMES]


def page(client, url, params=None, *, status=200, headers=ZH) -> str:
    response = client.get(url, params or {}, headers=headers)
    assert response.status_code == status, (url, response.status_code)
    html = response.content.decode()
    if headers is ZH:
        assert '<html lang="zh-hans">' in html
    return html


def chinese(html: str, *texts: str) -> None:
    missing = [t for t in texts if t not in html]
    assert missing == [], missing


# --- search --------------------------------------------------------------------------------------


@pytest.fixture
def two_on_one_tray(wms):
    """A completed and an active workflow that moved the same tray: a search lists both."""
    done = wms.build("completed")
    tray = done.moves[0].tray_code
    other = wms.workflow(moves=[wms.move()], step_statuses=["DISPATCHED"])
    with connection.cursor() as cursor:
        cursor.execute("UPDATE alg.tidy_step SET tray_code = %s WHERE workflow_id = %s", [tray, other.workflow_id])
    return tray, done, other


def test_search_with_results_speaks_chinese(two_on_one_tray, supervisor_client):
    tray, done, other = two_on_one_tray
    html = page(supervisor_client, reverse("search"), {"q": tray})
    assert left_on(html) == []
    chinese(html, "<h1>查找工作流</h1>", "2 个工作流匹配", "匹配项", "来源", "自动", "托盘", "创建时间",
            ">查找</button>", "可直接扫码")
    assert f'href="/workflows/{other.workflow_id}/"' in html and "status-completed" in html
    english = page(supervisor_client, reverse("search"), {"q": tray}, headers=EN)
    assert "2 workflows match" in english and "<h1>Find a workflow</h1>" in english and ">tray<" in english


def test_search_without_results_speaks_chinese(wms, supervisor_client):
    html = page(supervisor_client, reverse("search"), {"q": "NOPE"})
    assert left_on(html) == []
    chinese(html, "没有任何状态的工作流匹配“NOPE”")
    english = page(supervisor_client, reverse("search"), {"q": "NOPE"}, headers=EN)
    assert "No workflow in any status matches" in english


def test_search_with_bad_input_is_a_chinese_400_naming_the_field(wms, supervisor_client):
    html = page(supervisor_client, reverse("search"), {"q": "A01\x07"}, status=400)
    assert left_on(html) == []
    chinese(html, "q: </span>不允许控制字符。")
    too_long = page(supervisor_client, reverse("search"), {"q": "x" * 101}, status=400)
    assert left_on(too_long) == [] and "q: " in too_long
    english = page(supervisor_client, reverse("search"), {"q": "A01\x07"}, status=400, headers=EN)
    assert "q: </span>Control characters are not allowed." in english


# --- shift handover ------------------------------------------------------------------------------


@pytest.fixture
def shift_events(wms, audit_truncate_allowed, personas):
    """Something in every section of the current shift's handover."""
    missing = wms.build("job_missing")
    run_cycle()  # pauses it: a PAUSE decision in this shift
    stalled = wms.build("healthy", job_status=3)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE mydo_job SET updated_at = now() - interval '2 hours' WHERE job_id = %s",
                       [f"TDY-{stalled.workflow_id}-{stalled.step_ids[0]}"])
    lead = personas["shiftlead"]
    CancelProposal.objects.create(workflow_id=missing.workflow_id, proposed_by=lead, reason_code="OTHER",
                                  reason_text="托盘丢失", fingerprint="f", evidence={}, idempotency_key="k1")
    RepairAudit.objects.create(user=personas["operator"], username="operator", action="REISSUE",
                               workflow_id=missing.workflow_id, outcome="APPLIED", reason_code="JOB_LOST",
                               reason_text="作业丢失")
    RepairAudit.objects.create(user=personas["operator"], username="operator", action="RECHECK",
                               workflow_id=missing.workflow_id, outcome="REFUSED:PRECONDITION")
    WorkflowNote.objects.create(workflow_id=stalled.workflow_id, username="lena", user=lead, text="3 号车故障")
    now = timezone.now()
    raised = Notification.objects.create(event="stalled", dedup_key=f"stalled:{stalled.workflow_id}",
                                         subject=f"工作流 {stalled.workflow_id} 停滞", workflow_id=stalled.workflow_id,
                                         url_path=f"/workflows/{stalled.workflow_id}/", opened_at=now, last_seen_at=now)
    NotificationAcknowledgement.objects.create(notification=raised, user=personas["operator"], username="operator")
    return {"paused": missing, "stalled": stalled}


def test_the_handover_with_events_speaks_chinese(shift_events, client, personas):
    client.force_login(personas["shiftlead"])
    html = page(client, reverse("handover"))
    # User names are data; the repair actions' labels (console.repair.registry) are translated.
    left = left_on(html, allow={"lena"})
    assert left == []
    chinese(html, "重新下发作业", "复核并恢复运行")  # the repair actions' labels
    chinese(html, "<h1>交接班：", "本班次暂停的", "本班次的修复", "现在仍暂停的", "现在停滞的",
            "等待第二位班组长审批的取消提议", "本班次发出的通知", "本班次的确认", "本班次写的备注",
            ">当前班次</span>", "下载 CSV", "已执行", "已拒绝 <code>PRECONDITION</code>", ">恢复</td>", ">审核</a>",
            "仓库时间", "3 号车故障")
    assert f"#{shift_events['stalled'].workflow_id}" in html
    english = page(client, reverse("handover"), headers=EN)
    assert "Shift handover: " in english and "Repairs in this shift" in english and ">applied" in english
    assert ">recovery</td>" in english and "current shift" in english


def test_an_empty_handover_speaks_chinese(wms, client, personas):
    client.force_login(personas["supervisor"])
    html = page(client, reverse("handover"), {"shift": "2026-03-02@06:00"})
    assert left_on(html) == []
    chinese(html, "本班次没有暂停。", "本班次没有修复。", "没有暂停的工作流。", "没有停滞的工作流。",
            "没有等待审批的取消提议。", "本班次没有发出通知。", "本班次没有确认。", "本班次没有写备注。",
            "← 上一班次", "下一班次 →", "<h1>交接班：2026年3月2日 星期一 06:00 – ")


@pytest.mark.parametrize("shift,message", [
    ("yesterday", "请按 YYYY-MM-DD@HH:MM 填写班次"),
    ("2026-03-01@07:00", "07:00 不是班次开始时间"),
    ("2026-03-01@06:00\x00", "不允许控制字符。"),
])
def test_a_bad_shift_is_a_chinese_400_naming_the_field(wms, client, personas, shift, message):
    client.force_login(personas["operator"])
    html = page(client, reverse("handover"), {"shift": shift}, status=400)
    assert left_on(html) == []
    chinese(html, "shift: </span>" + message)


def test_the_handover_csv_keeps_its_english_columns(shift_events, client, personas):
    client.force_login(personas["supervisor"])
    response = client.get(reverse("handover"), {"format": "csv"}, headers=ZH)
    first = b"".join(response.streaming_content).decode().splitlines()[0]
    assert first == "section,time,workflow,who,what,detail"


# --- recovery cycles and flow health -------------------------------------------------------------


def _unauthorized_callback(client):
    body = {"job_id": "TDY-1-1", "stage": "MOVE_FINISHED"}
    return post(client, "job-finish", body, token="wrong-token", REMOTE_ADDR="192.0.2.7")


def test_the_recovery_page_speaks_chinese(wms, client, supervisor_client):
    wms.build("job_missing")
    run_cycle()
    RecoveryCycle.objects.create(started_at=timezone.now() - timedelta(seconds=2), finished_at=timezone.now(),
                                 outcome="FAILED", duration_ms=40, trigger="SCHEDULE", shard=1, shard_count=2,
                                 error_text="evidence query failed: boom")
    run_cycle()
    assert _unauthorized_callback(client).status_code == 401
    html = page(supervisor_client, reverse("recovery-health"))
    # The cycle's own error text is the server's, kept as written (like the logs).
    assert left_on(html) == []
    chinese(html, "<h1>恢复周期</h1>", "周期耗时", "每个周期后暂停的工作流", "最近的周期，最新的在前", "触发方式",
            "手动", "定时", "分片 1 / 2", "被拒绝的 WCS 回调（最近 24 小时）", "个请求被拒绝", "来自 192.0.2.7",
            "刻度上限", "端点")
    assert "RECOVERY_JOB_MISSING" in html and "PAUSE 1" in html
    english = page(supervisor_client, reverse("recovery-health"), headers=EN)
    assert "Recovery cycles" in english and "shard 1 of 2" in english and "refused request" in english


def test_the_recovery_page_before_any_cycle_speaks_chinese(wms, supervisor_client):
    html = page(supervisor_client, reverse("recovery-health"))
    assert left_on(html) == []
    chinese(html, "尚未运行过恢复周期", "尚无数据。", "最近 24 小时内没有被拒绝的 WCS 回调。", "恢复已过期。")


def _jobs(n: int, *, created_min_ago: float, finished_min_ago: float | None = None, prefix="J"):
    with connection.cursor() as cursor:
        for i in range(n):
            params = {"j": f"{prefix}-{created_min_ago}-{i}", "c": created_min_ago, "f": finished_min_ago}
            if finished_min_ago is None:
                cursor.execute("INSERT INTO mydo_job (job_id, in_or_out, status, tray_code, cargo_space_id, "
                               "target_cargo_space_id, created_at) VALUES (%(j)s, 28, 2, 'T', 'S', 'G', "
                               "now() - make_interval(secs => %(c)s * 60))", params)
            else:
                cursor.execute("INSERT INTO mydo_job_finish (job_id, in_or_out, status, tray_code, cargo_space_id, "
                               "target_cargo_space_id, created_at, finished_at) VALUES (%(j)s, 28, 4, 'T', 'S', "
                               "'G', now() - make_interval(secs => %(c)s * 60), "
                               "now() - make_interval(secs => %(f)s * 60))", params)


def test_flow_health_speaks_chinese_when_empty_draining_and_not_draining(wms, supervisor_client):
    empty = page(supervisor_client, reverse("flow-health"))
    assert left_on(empty) == []
    chinese(empty, "<h1>作业流转</h1>", "无需清空：没有活动的整理作业。",
            "队列为空", "没有活动的整理作业")

    built = wms.build("healthy")  # its job TDY-<workflow>-<step> is the oldest: linked to its workflow
    with connection.cursor() as cursor:
        cursor.execute("UPDATE mydo_job SET created_at = now() - interval '2 hours' WHERE in_or_out = 28")
    _jobs(30, created_min_ago=30)
    _jobs(120, created_min_ago=120, finished_min_ago=20, prefix="F")
    draining = page(supervisor_client, reverse("flow-health"))
    assert left_on(draining) == []
    chinese(draining, "个作业，净速率每分钟", f">工作流 #{built.workflow_id}</a>", "最近一小时 30 个",
            "每分钟到达数（最近一小时）", "刻度上限", "× 状态 2")

    _jobs(200, created_min_ago=10, prefix="N")
    growing = page(supervisor_client, reverse("flow-health"))
    assert left_on(growing) == []
    chinese(growing, "<strong>积压没有减少。</strong>", "积压每分钟约增加")
    english = page(supervisor_client, reverse("flow-health"), headers=EN)
    assert "Not draining." in english and "the backlog grows by about" in english


# --- security ------------------------------------------------------------------------------------


def test_the_security_page_speaks_chinese_to_a_shift_lead(client, personas):
    make_user("olga", password="right-password-for-tests")
    for attempt in range(5):
        client.post("/accounts/login/", {"username": "olga", "password": f"wrong-{attempt}", "next": "/"})
    make_user("marta", OPERATOR)
    client.force_login(personas["shiftlead"])
    html = page(client, reverse("security"))
    assert left_on(html, allow={"olga", "marta"}) == []
    chinese(html, "<h1>安全</h1>", "当前锁定", "失败次数", "锁定期间最近被拒绝的登录", "角色变更", "（无登录用户）",
            "操作员", "班组长", "应用程序", "更新于")
    assert ">olga<" in html and "manage.py axes_reset_username NAME" in html
    english = page(client, reverse("security"), headers=EN)
    assert "Locked now" in english and "(no signed-in user)" in english and ">shift lead<" in english


def test_the_security_page_without_lockouts_speaks_chinese(client, personas):
    client.force_login(make_user("lead2", SHIFT_LEAD))
    html = page(client, reverse("security"))
    assert left_on(html, allow={"lead2"}) == []
    chinese(html, "没有被锁定的用户名。", "没有记录。")


# --- the input checks' 4xx messages --------------------------------------------------------------


@pytest.mark.parametrize("path,params,expected", [
    ("/paused/", {"q": "a\x07b"}, "<p>搜索: 该值包含一个控制字符（U+0007）</p>"),
    ("/paused/", {"origin": "a\x00b"}, "<p>来源: 该值包含一个 NUL 字节</p>"),
    ("/locks/", {"after": "²-1"}, "<p>列表位置: 列表位置包含数字 0-9 和 &#x27;-&#x27; 以外的字符</p>"),
    ("/paused/", {"before": "1-99999999999999999999"}, "<p>列表位置: 列表位置中的数字超出范围</p>"),
])
def test_a_refused_list_filter_names_the_field_by_its_chinese_label(wms, supervisor_client, path, params, expected):
    html = page(supervisor_client, path, params, status=400)
    assert expected in html


def test_a_refused_value_reads_in_the_language_of_the_page_and_stays_english_for_machines():
    with translation.override("zh-hans"):
        with pytest.raises(InputRefused) as number:
            ascii_int("١٢", field="workflow", minimum=1)
        with pytest.raises(InputRefused) as text:
            safe_text("a\ud800", field="reason_text", max_length=10)
    assert number.value.message == "field 'workflow' must be a whole number written with the digits 0-9"
    assert text.value.message == "field 'reason_text' contains a lone surrogate (U+D800)"
    with translation.override("zh-hans"):
        assert number.value.localized == "字段 'workflow' 必须是用数字 0-9 写的整数"
        assert text.value.localized == "字段 'reason_text' 包含一个孤立的代理字符（U+D800）"
    with translation.override("en"):
        assert text.value.localized == text.value.message


def test_the_wcs_api_answers_english_whatever_the_language_asked_for(wms, client):
    response = post(client, "job-status", {"job_id": "TDY-1-1", "status": 2, "event_id": "x\x07"},
                    HTTP_ACCEPT_LANGUAGE="zh-Hans")
    assert response.status_code == 400
    body = json.loads(response.content)
    assert body["field"] == "event_id" and "contains a control character (U+0007)" in body["message"]


def test_a_long_handover_section_and_its_pages_speak_chinese(shift_events, client, personas, settings):
    settings.HANDOVER_SECTION_ROWS = 5
    WorkflowNote.objects.bulk_create([WorkflowNote(workflow_id=shift_events["stalled"].workflow_id, username="lena",
                                                   text=f"备注 {i}") for i in range(11)])
    client.force_login(personas["supervisor"])
    html = page(client, reverse("handover"))
    assert [part for part in left_on(html, allow={"lena"}) if part not in ("Re-issue job", "Re-check and resume")] \
        == []
    chinese(html, "…… 另有 7 条。", "逐页查看全部", "（CSV 包含每一行）")
    alone = page(client, reverse("handover"), {"section": "notes"})
    assert left_on(alone, allow={"lena"}) == []
    chinese(alone, "← 完整交接班", "第 1 页，共 1 页", "本班次写的备注")
    refused = page(client, reverse("handover"), {"section": "notes", "page": "x"}, status=400)
    assert left_on(refused) == []
    chinese(refused, "page: </span>请给出从 1 起的页码")


def test_a_note_past_the_hourly_limit_is_refused_in_chinese(wms, audit_truncate_allowed, client, personas,
                                                            settings):
    settings.NOTES_PER_USER_PER_HOUR = 1
    workflow = wms.build("healthy")
    client.force_login(personas["operator"])
    url = reverse("workflow-note-add", args=[workflow.workflow_id])
    assert client.post(url, {"text": "第一条"}, headers=ZH).status_code == 303
    response = client.post(url, {"text": "第二条"}, headers=ZH)
    assert response.status_code == 429
    html = response.content.decode()
    assert left_on(html) == []
    chinese(html, "您在过去一小时内已添加 1 条备注，已达每人上限。此备注未保存；")


def test_a_superuser_grant_on_the_security_page_speaks_chinese(client, personas):
    marta = make_user("marta", OPERATOR)
    marta.is_superuser = True
    marta.is_active = False
    marta.save()
    client.force_login(personas["shiftlead"])
    html = page(client, reverse("security"))
    assert left_on(html, allow={"marta"}) == []
    chinese(html, "操作员, 超级用户, 已停用")
