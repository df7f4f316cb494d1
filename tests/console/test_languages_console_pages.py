"""The console's list, workflow, lock, runbook, note and error pages speak zh-Hans completely.

Each page is rendered through the test client with `Accept-Language: zh-Hans` in every state
that shows different text, and `english_left` must find no English word outside codes. The
English rendering of the same pages keeps working (the other console tests assert its texts).

Times, ages and durations come from the formatting filters of console/templatetags (`when`,
`age`, `duration`) and the paused list's row values from its `paused_row_values` tag; that module
speaks the reader's language on its own, so its output is taken out before looking for English
here (`without_filter_output`), and these tests hold whichever language it renders in.
"""

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import translation
from django.utils.html import escape

from console.repair.registry import FAMILIES
from console.runbook import CATALOG
from recovery.demo.warehouse import EXPECTED
from recovery.engine.cycle import run_cycle
from recovery.models import CallbackReceipt
from tests.visible_text import english_left

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

ZH = {"Accept-Language": "zh-Hans"}
PERSONAS = {"supervisor", "operator", "shiftlead", "norole"}
PAUSE_KINDS = sorted(kind for kind, (action, _) in EXPECTED.items() if action == "PAUSE")

# What console/templatetags renders: <time> (when), "never"/"none" (when/reason_link on no
# value), durations such as "45 s", "3 h 05 min", "2 d 4 h" (age, duration), "… ago".
_TIME = re.compile(r"<time\b.*?</time>", re.S)
_EMPTY_VALUE = re.compile(r'<span class="muted">(never|none)</span>')
_DURATION = re.compile(r"-?\d+ (?:s|min|h|d)(?: \d+ (?:min|h))?(?: ago)?\b")
_PAUSED_ROWS = re.compile(r'(<table class="stack">\s*<caption class="visually-hidden">[^<]*</caption>\s*'
                          r"<thead>.*?</thead>\s*<tbody>).*?(</tbody>)", re.S)


# The workflow page's repair panel is the repair pages' (templates/repair), tested with them.
_REPAIR_SLOT = re.compile(r'(<section aria-label="[^"]*" class="repair-slot">).*?(</section>\s*<section id="notes")',
                          re.S)


def without_filter_output(html: str, *, paused_rows: bool = False) -> str:
    html = _REPAIR_SLOT.sub(r"\1\2", html)
    html = _DURATION.sub("", _EMPTY_VALUE.sub("", _TIME.sub("", html)))
    return _PAUSED_ROWS.sub(r"\1\2", html) if paused_rows else html


def zh(client, url: str, data=None, *, status: int = 200) -> str:
    response = client.get(url, data or {}, headers=ZH)
    assert response.status_code == status, url
    assert response["Content-Language"] == "zh-hans"
    return response.content.decode()


def assert_chinese(html: str, *expected: str, allow=(), paused_rows: bool = False) -> None:
    allow = PERSONAS | {"qcluster"} | set(allow)  # user names; a product name the glossary keeps
    left = english_left(without_filter_output(html, paused_rows=paused_rows), allow=allow)
    assert left == [], left
    for text in expected:
        assert text in html, text


def age_job(job_id: str, age: timedelta) -> None:
    with connection.cursor() as cursor:
        cursor.execute("UPDATE mydo_job SET updated_at = now() - %(age)s, created_at = now() - %(age)s - "
                       "interval '1 minute' WHERE job_id = %(j)s", {"age": age, "j": job_id})
        assert cursor.rowcount == 1


def job_of(built) -> str:
    return f"TDY-{built.workflow_id}-{built.step_ids[0]}"


# --- the runbook's texts -------------------------------------------------------------------

def test_every_runbook_text_has_a_chinese_translation():
    with translation.override("zh-hans"):
        for entry in CATALOG.values():
            texts = [entry.title, entry.meaning, *entry.floor_checks,
                     *(text for _, text in entry.rule_explanations),
                     *(a.why for a in (*entry.allowed, *entry.not_allowed)),
                     *(t for a in (*entry.allowed, *entry.not_allowed)
                       for t in (FAMILIES[a.correction].label, FAMILIES[a.correction].effect,
                                 FAMILIES[a.correction].role))]
            for text in texts:
                assert english_left(f"<p>{text}</p>") == [], (entry.code, str(text))
    assert str(CATALOG[EXPECTED["job_missing"][1]].title) == "Move job missing"


# --- paused workflows ----------------------------------------------------------------------

def test_the_empty_paused_list_speaks_chinese(supervisor_client, wms):
    wms.build("healthy")
    html = zh(supervisor_client, reverse("paused-workflows"))
    assert_chinese(html, "暂停的工作流", "没有暂停的工作流", "工作流、托盘或货位", "任意原因", "最早的在前")
    assert "RECOVERY_JOB_MISSING" in html


@pytest.mark.parametrize("who", ["supervisor", "operator"])
def test_the_filled_paused_list_speaks_chinese(client, personas, wms, who):
    wms.build("paused", reason="RECOVERY_JOB_MISSING", age_minutes=30 * 60)
    wms.build("paused", reason="RECOVERY_JOB_MISMATCH", age_minutes=20, origin="MANUAL")
    wms.build("paused", reason="RECOVERY_FINISH_EVIDENCE_INVALID", age_minutes=3 * 60)
    client.force_login(personas[who])
    html = zh(client, reverse("paused-workflows"))
    assert_chinese(html, "显示 <strong>3</strong> 个匹配的工作流中的 3 个", "暂停开始于", "保留的锁", "自动 (2)",
                   "手动 (1)", "1 到 8 小时 (1)", "超过 24 小时 (1)", paused_rows=True)
    assert html.count('class="wf"') == 3 and 'title="移库作业缺失"' in html
    assert ("批量复核全部 3 个暂停的工作流" in html) == (who == "operator")
    newest = zh(client, reverse("paused-workflows"), {"sort": "newest", "origin": "AUTOMATIC"})
    assert_chinese(newest, "最新的在前", "（共 3 个暂停）", "清除筛选", paused_rows=True)
    assert ("批量复核这 2 个暂停的工作流" in newest) == (who == "operator")


def test_paused_filters_without_a_match_and_with_bad_input_speak_chinese(supervisor_client, wms):
    wms.build("paused", reason="RECOVERY_JOB_MISSING")
    html = zh(supervisor_client, reverse("paused-workflows"), {"q": "T99999"})
    assert_chinese(html, "没有符合这些筛选条件的暂停工作流（搜索“T99999”", "显示所有暂停的工作流")
    html = zh(supervisor_client, reverse("paused-workflows"), {"reason": "RECOVERY_JOB_MISMATCH"})
    assert_chinese(html, "没有符合这些筛选条件的暂停工作流。")
    html = zh(supervisor_client, reverse("paused-workflows"), {"age": "forever"})
    assert_chinese(html, "<p>暂停时长: ", "forever", allow={"forever"}, paused_rows=True)


# --- active workflows ----------------------------------------------------------------------

def test_the_empty_active_list_speaks_chinese(supervisor_client, wms):
    html = zh(supervisor_client, reverse("active-workflows"))
    assert_chinese(html, "活动的工作流", "没有活动的工作流。", "仅停滞（0）")


def test_the_filled_active_list_speaks_chinese(supervisor_client, wms):
    stalled = wms.build("healthy", job_status=3, origin="MANUAL")
    age_job(job_of(stalled), timedelta(hours=1))
    wms.build("healthy", job_status=1)
    wms.build("job_missing")  # ACTIVE without a job
    html = zh(supervisor_client, reverse("active-workflows"))
    assert_chinese(html, "<strong>3</strong> 个活动的工作流", "停滞", "第 1 步", "没有活动作业", "手动", "自动",
                   "最久未变化的在前")
    assert html.count('class="stalled-flag"') == 1
    html = zh(supervisor_client, reverse("active-workflows"), {"stalled": "1", "origin": "AUTOMATIC"})
    assert_chinese(html, "没有符合这些筛选条件的活动工作流。", "显示所有活动的工作流")
    html = zh(supervisor_client, reverse("active-workflows"), {"stalled": "1", "origin": "MANUAL"})
    assert_chinese(html, "显示 1 个匹配项")


# --- the workflow page ---------------------------------------------------------------------

@pytest.mark.parametrize("kind", PAUSE_KINDS)
def test_a_paused_workflow_of_every_kind_speaks_chinese(supervisor_client, wms, kind):
    built = wms.build(kind)
    run_cycle()
    html = zh(supervisor_client, reverse("workflow-detail", args=[built.workflow_id]))
    reason = EXPECTED[kind][1]
    assert_chinese(html, f"工作流 #{built.workflow_id}", "证据：预期与实际", "暂停时记录的证据", "决策日志",
                   "产生了这个决策", "保留的锁", "步骤", "备注")
    assert reason in html and "PAUSED_RECOVERY" in html
    with translation.override("zh-hans"):
        assert str(CATALOG[reason].title) in html and escape(str(CATALOG[reason].meaning).split("。")[0]) in html


def test_workflows_without_pause_evidence_and_with_callbacks_speak_chinese(supervisor_client, wms):
    by_hand = wms.build("paused")  # paused outside the recovery journal
    html = zh(supervisor_client, reverse("workflow-detail", args=[by_hand.workflow_id]))
    assert_chinese(html, "该工作流没有记录暂停决策", "当前")

    healthy = wms.build("healthy")
    html = zh(supervisor_client, reverse("workflow-detail", args=[healthy.workflow_id]))
    assert_chinese(html, "该工作流未暂停", "预期状态：<strong>移库前</strong>", "（不暂停）", "没有收到回调")

    finished = wms.build("finish_terminal_last")
    html = zh(supervisor_client, reverse("workflow-detail", args=[finished.workflow_id]))
    assert_chinese(html, "已生效的回调事件", "回调事件 <code>MOVE_FINISHED</code>")

    paused = wms.build("job_missing")
    run_cycle()
    wms.job(paused, 0, status=2)  # the job row came back: the evidence changed since the pause
    CallbackReceipt.objects.create(endpoint="job-finish", job_id=job_of(paused), workflow_id=paused.workflow_id,
                                   step_id=paused.step_ids[0], stage="MOVE_FINISHED", http_status=409,
                                   outcome="REFUSED_PAUSED", message="workflow is PAUSED_RECOVERY")
    html = zh(supervisor_client, reverse("workflow-detail", args=[paused.workflow_id]))
    assert_chinese(html, "暂停以来的变化：", "已变化", "收到的所有回调，包括被拒绝的", "（周期 ", "恢复")
    # The answer WCS received is shown as sent (a machine reads it), marked as not translated.
    assert '<div class="muted" translate="no">workflow is PAUSED_RECOVERY</div>' in html


def test_notes_and_a_refused_note_speak_chinese(client, personas, wms, audit_truncate_allowed):
    built = wms.build("healthy")
    client.force_login(personas["operator"])
    url = reverse("workflow-detail", args=[built.workflow_id])
    assert_chinese(zh(client, url), "还没有备注。", "添加备注", "最多 2000 个字符")
    add = reverse("workflow-note-add", args=[built.workflow_id])
    assert client.post(add, {"text": "Vehicle 3 fault"}, headers=ZH).status_code == 303
    assert_chinese(zh(client, url), "Vehicle 3 fault", "备注", allow={"Vehicle", "fault"})

    refused = client.post(add, {"text": "x" * 2001}, headers=ZH)
    assert refused.status_code == 400
    assert_chinese(refused.content.decode(), "备注没有添加", "<p>备注: ", "2001",
                   allow={"x" * 2001, "Vehicle", "fault"})
    htmx = client.post(add, {"text": ""}, headers={**ZH, "HX-Request": "true"})
    assert htmx.status_code == 200 and 'id="note-error"' in htmx.content.decode()
    assert_chinese(htmx.content.decode(), "备注: ", "Vehicle 3 fault", allow={"Vehicle", "fault"})


# --- locks and the runbook -----------------------------------------------------------------

def test_the_locks_page_speaks_chinese_empty_filled_and_without_a_match(supervisor_client, wms):
    html = zh(supervisor_client, reverse("locks"))
    assert_chinese(html, "暂停的工作流持有的锁", "0 个锁", "没有暂停的工作流持有锁")

    holder = wms.build("job_missing")
    run_cycle()
    other = wms.workflow(moves=[wms.move()], step_statuses=["PENDING"], lock=False)
    with connection.cursor() as cursor:  # a later workflow that needs a locked space as its source
        cursor.execute("UPDATE alg.tidy_step SET cargo_space_id = %s WHERE workflow_id = %s",
                       [holder.moves[0].target, other.workflow_id])
    html = zh(supervisor_client, reverse("locks"))
    assert_chinese(html, "个锁，显示", "持有者", "需要它作为源货位", "没有其他步骤", "自动", "空")
    html = zh(supervisor_client, reverse("locks"), {"q": "Z99-99-99"})
    assert_chinese(html, "没有暂停的工作流的锁匹配“Z99-99-99”", "显示全部")
    html = zh(supervisor_client, reverse("locks"), {"after": "garbage"})
    assert_chinese(html, "<p>列表位置: ", allow={"That", "list", "position", "is", "not", "valid", "showing",
                                                 "the", "first", "page"})


def test_the_reason_codes_page_speaks_chinese(supervisor_client, wms):
    html = zh(supervisor_client, reverse("reason-codes"))
    assert_chinese(html, "现场要检查什么", "允许的修正", "此原因不允许的修正", "当前没有因此原因暂停的工作流。",
                   "重新下发作业", "(班组长)", "效果：", "既没有匹配的活动作业，也没有匹配的完成作业。")
    wms.build("job_missing")
    run_cycle()
    html = zh(supervisor_client, reverse("reason-codes"))
    assert_chinese(html, "当前有 1 个工作流因此原因暂停", "1 个暂停")
    for code in ("RECOVERY_JOB_MISSING", "RECOVERY_JOB_MISMATCH", "no-job"):
        assert code in html


# --- refusals ------------------------------------------------------------------------------

def test_403_and_404_speak_chinese(client, personas, wms):
    client.force_login(personas["norole"])
    html = zh(client, reverse("locks"), status=403)
    assert_chinese(html, "无权访问", "没有控制台角色", "<code>shift lead</code>（班组长）")

    client.force_login(personas["supervisor"])
    html = zh(client, reverse("workflow-detail", args=[999999]), status=404)
    assert_chinese(html, "未找到", "工作流 999999 不存在。", "返回暂停的工作流")
    html = zh(client, "/no-such-page/", status=404)
    assert_chinese(html, "没有这个页面。")


# --- English stays English -----------------------------------------------------------------

def test_the_same_pages_still_speak_english(client, personas, wms):
    built = wms.build("job_missing")
    run_cycle()
    client.force_login(personas["supervisor"])
    pages = {
        reverse("paused-workflows"): ["Showing 1 of <strong>1</strong> matching workflow, oldest first.",
                                      "Workflow, tray or space", "under 1 hour (1)", "Automatic (1)"],
        reverse("active-workflows"): ["<strong>0</strong> active workflows", "No workflow is active."],
        reverse("workflow-detail", args=[built.workflow_id]): [
            "Evidence: expected versus observed", "Decision table: <strong>pause</strong> with",
            "Neither a matching active job nor a matching finish job exists.", "Move job missing",
            "No notes yet.", "recovery (cycle "],
        reverse("locks"): [" locks, showing ", ", oldest first.", "no other step"],
        reverse("reason-codes"): ["1 workflow paused with this reason now", "(shift lead)", "Effect: ",
                                  "Re-issue job"],
    }
    for url, texts in pages.items():
        response = client.get(url)
        html = response.content.decode()
        assert response.status_code == 200 and '<html lang="en">' in html, url
        for text in texts:
            assert text in html, (url, text)
        assert not re.search(r"[\u4e00-\u9fff]", html.replace("简体中文", "")), url
    html = client.get("/no-such-page/").content.decode()
    assert "There is no such page." in html and "Resolver404" not in html
