"""The audited repair flow in Simplified Chinese: every repair page, in each state that shows
different text, rendered with a zh-Hans browser, has no English left in its visible text except
codes and what the test typed itself (user names, written reasons). Refusal and audit messages
are stored as message ids with values beside their English, and rendered in the reader's
language; the English pages are unchanged."""

import json

import pytest
from django.urls import reverse
from django.utils import translation

from console.models import CancelProposal, RepairAudit, RepairBatch
from console.repair import texts
from console.repair.forms import AuditFilterForm, RepairForm
from recovery.engine.decisions import RULE_EXPLANATIONS, Rule
from recovery.engine.transaction import repair as m
from recovery.messages import Message
from tests.repair_support import *  # noqa: F403  (fixtures)
from tests.repair_support import at_source, fingerprint, key, paused, run_queued_tasks
from tests.visible_text import WORD, english_left

ZH = {"Accept-Language": "zh-Hans"}
REASON = "Checked the aisle with the night shift"
SHORT = "gone"
USERS = {"olga", "sven", "lena", "lars"}
TYPED = USERS | set(REASON.split()) | {SHORT}


def chinese(response, *expected, status=200):
    """The page's HTML, after checking it is Chinese all through (codes and typed words aside)."""
    html = response.content.decode()
    assert response.status_code == status, html[:800]
    assert '<html lang="zh-hans">' in html
    assert english_left(html, allow=TYPED) == []
    for text in expected:
        assert text in html, text
    return html


def hostile_words(data, form=None) -> set[str]:
    """The words of console.input_checks' own message for a hostile field (that module words it,
    in the reader's language once it is translated there), which the repair page quotes."""
    with translation.override("zh-hans"):
        form = form(data) if form else RepairForm(data, action="REISSUE", pause_reason=None)
        return {w for errors in form.errors.values() for e in errors for w in WORD.findall(str(e))}


def chinese_but(response, allowed, *expected, status=200):
    global TYPED
    typed, TYPED = TYPED, TYPED | allowed
    try:
        return chinese(response, *expected, status=status)
    finally:
        TYPED = typed


def preview_url(wid, slug):
    return reverse("repair-preview", args=[wid, slug])


def apply_url(wid, slug):
    return reverse("repair-apply", args=[wid, slug])


def post(client, url, data):
    return client.post(url, data, headers=ZH)


def get(client, url, data=None):
    return client.get(url, data or {}, headers=ZH)


def previewed(client, wid, slug, code, **extra):
    """A re-issue carries the matching floor scans unless the test gives its own."""
    extra = {**(at_source(wid) if slug == "reissue" else {}), **extra}
    response = post(client, preview_url(wid, slug), {"reason_code": code, "reason_text": REASON, **extra})
    assert response.status_code == 200, response.content.decode()[:800]
    return response


def applied(client, wid, slug, code, **extra):
    extra = {**(at_source(wid) if slug == "reissue" else {}), **extra}
    page = previewed(client, wid, slug, code, **extra)
    return post(client, apply_url(wid, slug), {
        "reason_code": code, "reason_text": REASON, "fingerprint": page.context["preview"].fingerprint,
        "idempotency_key": page.context["key"], **extra})


# --- the workflow's repair page, the form, the preview, the audit entry -----------------------------


def test_the_repair_page_form_preview_and_audit_entry_speak_chinese(repair_db, operator, client):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(operator)
    chinese(get(client, reverse("repair-workflow", args=[wid])),
            "修复工作流", "当前证据", "重新下发作业", "不可用", "此工作流尚未尝试过修复", "修复审计")
    chinese(get(client, reverse("repair-form", args=[wid, "reissue"])),
            "原因码", "书面原因", "移库作业在重启时丢失", "预览更改", "当前证据")
    html = chinese(previewed(client, wid, "reissue", "JOB_LOST_AT_RESTART"),
                   "预览：重新下发作业", "确认后将执行的操作", "已重新创建作业", "第 1 步", "将更改的行", "你的原因")
    assert "确认并应用" in html
    response = applied(client, wid, "reissue", "JOB_LOST_AT_RESTART")
    assert response.status_code == 303
    entry = RepairAudit.objects.filter(outcome="APPLIED").last()
    # Stored as ever, in English; read in Chinese.
    assert entry.message.startswith("job TDY-") and "created again (status 1)" in entry.message
    chinese(get(client, response["Location"]),
            "已重新创建作业", "之后的决策表结论", "之前和之后的证据", "已更改", "工作流状态", "应用")
    # The panel's audit trail now lists the attempt.
    chinese(get(client, reverse("repair-workflow", args=[wid])), "修复审计记录", "此工作流的完整审计")


def test_a_form_with_field_errors_and_a_refused_precondition_speak_chinese(repair_db, operator, client):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(operator)
    html = chinese(post(client, preview_url(wid, "reissue"), {"reason_code": "JOB_LOST_AT_RESTART",
                                                              "reason_text": SHORT}),
                   "请更正下面的字段", "请至少写 15 个字符")
    assert "Write at least" not in html
    chinese(post(client, preview_url(wid, "reissue"), {"reason_code": "", "reason_text": ""}),
            "必须填写书面原因")
    chinese(post(client, preview_url(wid, "reissue"), {"reason_code": "TRAY_FOUND_AT_SOURCE",
                                                       "reason_text": REASON}),
            "不适用于此操作和暂停原因")
    # The decision table still pauses it: refused with the table's own explanation, translated.
    chinese(post(client, preview_url(wid, "recheck"), {"reason_code": "WMS_RECORDS_FIXED", "reason_text": REASON}),
            "已拒绝（PRECONDITION）",
            "决策表仍判定以", "既没有匹配的活动作业，也没有匹配的完成作业", "此次尝试已记入审计记录")


def test_scanned_codes_that_do_not_match_and_a_reconcile_form_speak_chinese(repair_db, operator, client):
    built = paused(repair_db, "active_not_pre_move")
    wid, move = built.workflow_id, built.moves[0]
    client.force_login(operator)
    chinese(get(client, reverse("repair-form", args=[wid, "reconcile-target"])),
            "托盘码（扫描或输入）", "它的目标货位")
    chinese(post(client, preview_url(wid, "reconcile-target"), {
        "reason_code": "TRAY_FOUND_AT_TARGET", "reason_text": REASON, "tray_code": "T-WRONG-9",
        "space_code": move.source}),
        "扫描的托盘", "不是该步骤的托盘", "那是这次移库的另一端", "扫描的编码与记录不符",
        '扫描的托盘 <code translate="no">T-WRONG-9</code> 不是该步骤的托盘。')  # on the field, not escaped
    # A reissue is refused on this evidence: every why-not of the panel reads in Chinese.
    chinese(get(client, reverse("repair-workflow", args=[wid])), "作业", "不可用")


def test_refusal_pages_speak_chinese(repair_db, operator, supervisor, client):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(operator)
    page = previewed(client, wid, "reissue", "JOB_LOST_AT_RESTART")
    # Stale evidence: the fingerprint confirmed is not the evidence's.
    stale = post(client, apply_url(wid, "reissue"), {
        "reason_code": "JOB_LOST_AT_RESTART", "reason_text": REASON, "fingerprint": "0" * 64,
        "idempotency_key": page.context["key"], **at_source(wid)})
    chinese(stale, "没有应用任何更改", "证据在你预览之后发生了变化", "当前证据", "基于当前证据重新开始",
            "返回工作流", status=409)
    # No submission key.
    chinese(post(client, apply_url(wid, "reissue"), {"reason_code": "JOB_LOST_AT_RESTART", "reason_text": REASON,
                                                    "fingerprint": fingerprint(wid), "idempotency_key": ""}),
            "表单缺少提交密钥", status=409)
    # A role that may not repair.
    client.force_login(supervisor)
    chinese(post(client, preview_url(wid, "reissue"), {"reason_code": "JOB_LOST_AT_RESTART", "reason_text": REASON}),
            "你的角色不能执行此操作", status=403)
    # An operator proposing a cancel.
    client.force_login(operator)
    chinese(post(client, apply_url(wid, "cancel"), {"reason_code": "TIDY_NO_LONGER_NEEDED", "reason_text": REASON,
                                                   "fingerprint": fingerprint(wid), "idempotency_key": key()}),
            "你的角色不能执行此操作", status=403)
    # The audit list holds the refusals; one entry of each reads in Chinese.
    chinese(get(client, reverse("repair-audit")), "修复审计", "筛选", "导出 CSV", "之后是否一致", "（预览）")
    for entry in RepairAudit.objects.all():
        chinese(get(client, reverse("repair-audit-entry", args=[entry.pk])), "结果：", "之前和之后的证据")


def test_bad_input_speaks_chinese(repair_db, operator, client):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(operator)
    html = chinese(get(client, reverse("repair-audit"), {"before": "abc"}), "没有记录任何内容", "必须是审计条目编号",
                   status=400)
    assert "<code>before</code>" in html
    hostile = {"reason_code": "JOB_LOST_AT_RESTART", "reason_text": "bad\x00byte in the reason",
               "fingerprint": "x" * 64, "idempotency_key": key()}
    html = chinese_but(post(client, apply_url(wid, "reissue"), hostile), hostile_words(hostile),
                       "没有记录任何内容", "字段 <code>reason_text</code>", "返回工作流", status=400)
    assert "field 'reason_text'" not in html
    # A workflow that does not exist: the 404 page (not the repair flow's) names it in Chinese.
    assert "工作流 999999 不存在。" in get(client, reverse("repair-workflow", args=[999999])).content.decode()
    html = get(client, reverse("repair-form", args=[wid, "fix-it"])).content.decode()
    assert "没有修复操作 &#x27;fix-it&#x27;。" in html
    bad = {"workflow": "x"}
    chinese_but(get(client, reverse("repair-audit"), bad), hostile_words(bad, form=AuditFilterForm), "修复审计",
                "工作流", status=400)


# --- four eyes ------------------------------------------------------------------------------------------


def test_a_cancel_proposal_waiting_approved_and_rejected_speaks_chinese(repair_db, shiftlead, shiftlead2, client):
    wid = paused(repair_db, "job_missing").workflow_id
    other = paused(repair_db, "job_missing").workflow_id
    client.force_login(shiftlead)
    chinese(get(client, reverse("repair-form", args=[wid, "cancel"])), "提议取消并释放", "不再需要此整理")
    chinese(previewed(client, wid, "cancel", "TIDY_NO_LONGER_NEEDED"),
            "现在不会更改任何内容", "批准后将执行的操作", "工作流 CANCELLED", "个锁")
    response = applied(client, wid, "cancel", "TIDY_NO_LONGER_NEEDED")
    assert response.status_code == 303
    proposal = CancelProposal.objects.get(workflow_id=wid)
    # Waiting, seen by its proposer: withdraw only.
    chinese(get(client, response["Location"]), "这是你提出的提议", "撤回 — 不做任何更改",
            "不需要：提议时没有搬运车")
    # The workflow page's panel shows the pending proposal; the list shows it waiting.
    chinese(get(client, reverse("repair-workflow", args=[wid])), "提议取消并释放（", "查看、批准或驳回")
    chinese(get(client, reverse("repair-proposals")), "等待批准", "提议")
    # Nobody approves their own proposal.
    chinese(post(client, reverse("repair-proposal-approve", args=[proposal.pk]), {
        "reason_code": "CANCEL_CHECKED_ON_FLOOR", "reason_text": REASON, "idempotency_key": key(),
        "fingerprint": fingerprint(wid)}), "任何人都不能批准自己的提议", status=403)
    # A second shift lead: the approval form, with field errors, then approved.
    client.force_login(shiftlead2)
    chinese(get(client, response["Location"]), "批准（双人复核）", "现在批准将执行的操作", "驳回 — 不做任何更改")
    chinese(post(client, reverse("repair-proposal-approve", args=[proposal.pk]), {
        "reason_code": "CANCEL_CHECKED_ON_FLOOR", "reason_text": SHORT, "idempotency_key": key(),
        "fingerprint": fingerprint(wid)}), "请至少写 15 个字符")
    done = post(client, reverse("repair-proposal-approve", args=[proposal.pk]), {
        "reason_code": "CANCEL_CHECKED_ON_FLOOR", "reason_text": REASON, "idempotency_key": key(),
        "fingerprint": fingerprint(wid)})
    assert done.status_code == 303
    approval = RepairAudit.objects.filter(action="CANCEL_APPROVE", outcome="APPLIED").first()
    assert approval.message.startswith(f"approved proposal {proposal.pk} by lena: ")
    chinese(get(client, done["Location"]), "已批准", "的提议", "工作流 CANCELLED", "批准取消并释放")
    chinese(get(client, reverse("repair-proposal", args=[proposal.pk])), "决定人", "此提议的审计")
    # A second proposal, rejected.
    client.force_login(shiftlead)
    applied(client, other, "cancel", "TIDY_NO_LONGER_NEEDED")
    second = CancelProposal.objects.get(workflow_id=other)
    client.force_login(shiftlead2)
    rejected = post(client, reverse("repair-proposal-reject", args=[second.pk]), {
        "reason_code": "REPAIRABLE_INSTEAD", "reason_text": REASON, "idempotency_key": key()})
    assert rejected.status_code == 303
    chinese(get(client, rejected["Location"]), "已驳回", "没有任何更改", "驳回取消并释放")
    chinese(get(client, reverse("repair-proposal", args=[second.pk])), "决定人")
    chinese(get(client, reverse("repair-proposals")), "决策时间", "由")
    # Deciding a closed proposal is refused.
    chinese(post(client, reverse("repair-proposal-reject", args=[second.pk]), {
        "reason_code": "REPAIRABLE_INSTEAD", "reason_text": REASON, "idempotency_key": key()}),
        "不在等待中", status=409)


def test_a_cancel_while_a_vehicle_may_move_the_tray_speaks_chinese(repair_db, shiftlead, client):
    built = paused(repair_db, "active_not_pre_move")
    wid = built.workflow_id
    client.force_login(shiftlead)
    chinese(get(client, reverse("repair-form", args=[wid, "cancel"])), "搬运车可能正在搬运此托盘", "（状态 3）")
    chinese(post(client, preview_url(wid, "cancel"), {"reason_code": "TRAY_MISSING_OR_DAMAGED",
                                                      "reason_text": REASON}),
            "扫描或输入托盘上读到的托盘码", "扫描或输入托盘现在所在的货位", "搬运车可能正在搬运托盘")
    move = built.moves[0]
    page = previewed(client, wid, "cancel", "TRAY_MISSING_OR_DAMAGED", tray_code=move.tray_code,
                     space_code=move.source)
    chinese(page, "现场确认：在货位", "批准前请确认 WCS 已停止它们")
    response = applied(client, wid, "cancel", "TRAY_MISSING_OR_DAMAGED", tray_code=move.tray_code,
                       space_code=move.source)
    chinese(get(client, response["Location"]), "批准会将库存和货位记录更正到该货位")
    entry = RepairAudit.objects.filter(outcome="PROPOSED").last()
    chinese(get(client, reverse("repair-audit-entry", args=[entry.pk])), "现场确认：托盘", "须由另一位班组长批准")


# --- batch re-check --------------------------------------------------------------------------------------


def test_the_batch_pages_speak_chinese(repair_db, operator, client):
    fixed = paused(repair_db, "job_missing")
    repair_db.job(fixed, 0, status=1)  # restored in the WMS
    unfixed = paused(repair_db, "job_missing").workflow_id
    client.force_login(operator)
    chinese(get(client, reverse("repair-batch")), "批量复核并恢复运行", "个暂停的工作流符合", "恢复运行（",
            "保持暂停", "检查所选工作流", "任意来源", "不到 1 小时")
    chinese(get(client, reverse("repair-batch"), {"q": "nothing-matches-this"}), "没有符合的暂停工作流")
    preview = post(client, reverse("repair-batch-preview"), {"workflow": [str(fixed.workflow_id), str(unfixed)]})
    chinese(preview, "复核 2 个工作流", "将复核 <strong>2</strong> 个暂停的工作流", "将保持暂停", "已在 WMS 中更正记录")
    chinese(post(client, reverse("repair-batch-preview"), {"all_matching": "1", "reason": "RECOVERY_JOB_MISSING"}),
            "（所有符合筛选条件的）")
    rows = preview.context["rows"]
    data = {"workflow": [f"{r.workflow_id}:{r.fingerprint}" for r in rows], "reason_code": "WMS_RECORDS_FIXED",
            "reason_text": SHORT, "idempotency_key": key()}
    chinese(post(client, reverse("repair-batch-apply"), data), "请更正下面的原因", "请至少写 15 个字符")
    response = post(client, reverse("repair-batch-apply"), {**data, "reason_text": REASON, "idempotency_key": key()})
    assert response.status_code == 303
    chinese(get(client, response["Location"]), "批量复核", "尚未复核任何工作流", "任务队列逐个复核它们")
    assert run_queued_tasks() == 1
    batch = RepairBatch.objects.get()
    chinese(get(client, response["Location"]), "已完成 <strong>2</strong>/2", "个已恢复运行", "决策表仍判定以",
            "已恢复运行；工作流重新处于活动状态")
    chinese(get(client, reverse("repair-audit"), {"batch": batch.pk}), f"批次 {batch.pk}")
    for entry in batch.audit.all():
        chinese(get(client, reverse("repair-audit-entry", args=[entry.pk])), f"批量复核 {batch.pk}")
    # Nothing selected.
    chinese(post(client, reverse("repair-batch-apply"), {"reason_code": "WMS_RECORDS_FIXED", "reason_text": REASON,
                                                         "idempotency_key": key()}),
            "请至少选择一个工作流", status=409)


# --- stored texts: message ids with values ------------------------------------------------------------------


def _m(template, **values):
    return Message(template, values)


def _scanned_codes_mismatch():
    wrong_tray = _m(texts.WRONG_TRAY, tray=Message(texts.EMPTY))
    wrong_space = Message.sentences([_m(texts.WRONG_TARGET, space="A01"), Message(texts.OTHER_END)])
    return _m(texts.CODES_MISMATCH, details=Message.sentences([wrong_tray, wrong_space]))


# Each message as the repair flow builds it, and the English it has always stored.
STORED = [
    (Message.joined([_m(m.JOB_CREATED_AGAIN, job_id="TDY-7-1"), _m(m.STEP_DISPATCHED, step_no=1),
                     Message(m.WORKFLOW_ACTIVE)]),
     "job TDY-7-1 created again (status 1); step 1 DISPATCHED; workflow ACTIVE"),
    (Message.joined([_m(m.TRAY_AT_TARGET, tray="T-0042", space="A01-02-03"),
                     _m(m.JOB_ARCHIVED, job_id="TDY-7-1", job_status=4), _m(m.STEP_COMPLETED, step_no=1),
                     _m(m.NEXT_JOB, job_id="TDY-7-2")]),
     "tray T-0042 recorded at target A01-02-03; job TDY-7-1 archived with status 4; step 1 COMPLETED; "
     "next job TDY-7-2 dispatched"),
    (_m(texts.APPROVED, proposal=3, user="lena", summary=Message.joined([
        _m(m.STEPS_CANCELLED, count=1), _m(m.JOBS_ARCHIVED, count=0), Message(m.WORKFLOW_CANCELLED),
        _m(m.LOCKS_RELEASED, count=2)])),
     "approved proposal 3 by lena: 1 step(s) CANCELLED; 0 active job(s) archived with their own status; "
     "workflow CANCELLED; 2 lock(s) released"),
    (_scanned_codes_mismatch(),
     "The scanned codes do not match the records: Scanned tray (empty) is not the step's tray. Scanned space A01 "
     "is not the step's target. That is the other end of the move: choose the other location."),
    (_m(texts.STILL_PAUSED, wf_status="PAUSED_RECOVERY", decision="PAUSE RECOVERY_JOB_MISSING (no-job)"),
     "still PAUSED_RECOVERY; if it were active the table would say PAUSE RECOVERY_JOB_MISSING (no-job)"),
    (_m(texts.DECIDED, wf_status="ACTIVE", decision="LEAVE (active-job-pre-move)"),
     "ACTIVE: LEAVE (active-job-pre-move)"),
    (Message.sentences([_m(texts.STILL_PAUSES, reason="RECOVERY_JOB_MISSING",
                           explanation=Message(RULE_EXPLANATIONS[Rule.NO_JOB]))]),
     "The decision table still says pause with RECOVERY_JOB_MISSING: Neither a matching active job nor a matching "
     "finish job exists."),
    (_m(texts.CODE_NOT_ALLOWED, code=Message(texts.NONE), reason="RECOVERY_JOB_MISSING"),
     "Reason code (none) is not allowed for this action and pause reason RECOVERY_JOB_MISSING."),
]


@pytest.mark.parametrize(("stored", "english"), STORED)
def test_every_stored_message_keeps_its_english_and_reads_in_chinese(stored, english):
    assert stored.english() == english
    kept = json.loads(json.dumps(stored.as_json()))  # as the audit row's JSON column keeps it
    with translation.override("zh-hans"):
        shown = str(texts.shown(kept, english))
    assert shown != english and english_left(f"<p>{shown}</p>", allow={"lena"}) == []
    with translation.override("en"):
        assert texts.shown(kept, english) == english
        assert texts.shown(stored) == english


def test_sentences_follow_each_other_without_a_space_in_chinese():
    with translation.override("zh-hans"):
        shown = str(texts.shown(_scanned_codes_mismatch()))
    assert "不是该步骤的托盘。扫描的货位" in shown, shown
    assert "。 " not in shown


def test_an_audit_row_written_before_messages_were_stored_shows_its_english(repair_db, operator, client):
    wid = paused(repair_db, "job_missing").workflow_id
    old = "job TDY-1-1 created again (status 1); step 1 DISPATCHED; workflow ACTIVE"
    entry = RepairAudit.objects.create(user=operator, username="olga", action="REISSUE", workflow_id=wid,
                                       outcome="APPLIED", message=old, decision_after="ACTIVE: LEAVE (old-rule)")
    assert entry.message_json is None and entry.decision_after_json is None
    client.force_login(operator)
    html = get(client, reverse("repair-audit-entry", args=[entry.pk])).content.decode()
    assert f'<p id="entry-message">{old}</p>' in html and "ACTIVE: LEAVE (old-rule)" in html
    # A row written now keeps both: the English and the message it is made from.
    applied(client, wid, "reissue", "JOB_LOST_AT_RESTART")
    new = RepairAudit.objects.filter(outcome="APPLIED").order_by("id").last()
    assert Message.from_json(new.message_json).english() == new.message
    assert Message.from_json(new.decision_after_json).english() == new.decision_after
    refusal = RepairAudit.objects.create(user=operator, username="olga", action="RECHECK", workflow_id=wid,
                                         outcome="REFUSED:PRECONDITION", message="something the console never wrote")
    with translation.override("zh-hans"):
        assert texts.shown(refusal.message_json, refusal.message) == "something the console never wrote"


def test_the_english_pages_are_unchanged(repair_db, operator, client):
    wid = paused(repair_db, "job_missing").workflow_id
    client.force_login(operator)
    html = client.post(preview_url(wid, "reissue"), {"reason_code": "JOB_LOST_AT_RESTART",
                                                     "reason_text": SHORT}).content.decode()
    assert '<html lang="en">' in html and "Write at least 15 characters" in html and "Preview the changes" in html
    page = client.post(preview_url(wid, "reissue"), {"reason_code": "JOB_LOST_AT_RESTART", "reason_text": REASON,
                                                     **at_source(wid)})
    html = page.content.decode()
    assert "What confirming will do" in html and "created again (status 1); step 1 DISPATCHED" in html
    entry = client.post(apply_url(wid, "reissue"), {
        "reason_code": "JOB_LOST_AT_RESTART", "reason_text": REASON, "fingerprint": page.context["preview"].fingerprint,
        "idempotency_key": page.context["key"], **at_source(wid)})
    html = client.get(entry["Location"]).content.decode()
    assert "Re-issue job" in html and "Evidence before and after" in html and "workflow status" in html
