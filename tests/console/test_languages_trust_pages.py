"""The observe page, the preview, the case file, the analytics and the observe-mode banner speak
zh-Hans completely (english_left finds nothing outside codes and data), and the case file's
summaries are written in the reader's language in its JSON too."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from console.models import RepairAudit
from console.notes.services import note_create
from recovery.engine.cycle import run_cycle
from tests.console.analytics.test_analytics import pause
from tests.console.test_languages_console_pages import assert_chinese, zh
from tests.wcs_helpers import finish


@pytest.fixture
def observed(wms, settings):
    """Observations in each state the observe page tells apart."""
    settings.RECOVERY_MODE = "observe"
    pending = wms.build("job_missing")
    confirmed = wms.build("finish_terminal")
    repaired = wms.build("active_mismatch")
    run_cycle()
    RepairAudit.objects.create(username="operator", action="RECONCILE_TARGET", workflow_id=repaired.workflow_id,
                               outcome="APPLIED")
    return pending, confirmed


@pytest.mark.usefixtures("committed_db")
def test_the_observe_page_and_the_banner_speak_chinese(supervisor_client, observed, client):
    _, confirmed = observed
    assert finish(client, f"TDY-{confirmed.workflow_id}-{confirmed.step_ids[0]}").status_code == 200
    html = zh(supervisor_client, "/recovery/observe/")
    assert_chinese(html, "观察到的决策", "恢复正在观察模式下运行。", "由回调推进", "由操作员修复", "一致", "尚不可知",
                   "100%（1 条中 1 条）")
    empty = zh(supervisor_client, "/recovery/observe/", {"action": "COMPLETE"})
    assert_chinese(empty, "尚未观察到任何决策")
    bad = zh(supervisor_client, "/recovery/observe/", {"action": "LEAVE"}, status=400)
    assert_chinese(bad, "action: ", allow={"action"})


def test_the_observe_page_in_apply_mode_speaks_chinese(supervisor_client, wms, settings):
    settings.RECOVERY_MODE = "apply"
    html = zh(supervisor_client, "/recovery/observe/")
    assert_chinese(html, "恢复会执行其决策；没有观察记录。")
    assert "恢复正在观察模式下运行。" not in html


def test_the_preview_speaks_chinese(supervisor_client, wms):
    for kind in ("job_missing", "finish_terminal", "healthy", "all_completed"):
        wms.build(kind)
    html = zh(supervisor_client, "/recovery/preview/")
    assert_chinese(html, "下一周期预览", "按操作和原因", "个活动工作流，其中 3 个会发生变化")
    empty_wms = zh(supervisor_client, "/recovery/preview/")
    assert "下一周期预览" in empty_wms


def test_the_recovery_page_with_an_observing_cycle_speaks_chinese(supervisor_client, observed):
    html = zh(supervisor_client, "/recovery/")
    assert_chinese(html, "下一周期预览", "观察到的决策", "仅观察，未执行")


def test_the_case_file_speaks_chinese(wms, client, personas, settings):
    settings.NOTIFY_EMAIL_TO, settings.NOTIFY_WEBHOOK_URL = [], ""
    built = wms.build("job_missing")
    run_cycle(mode="observe")
    run_cycle(mode="apply")
    note_create(workflow_id=built.workflow_id, text="托盘不在货位上", user=personas["operator"])
    client.force_login(personas["operator"])
    html = zh(client, f"/workflows/{built.workflow_id}/case-file.html")
    assert_chinese(html, "工作流 #", "的案卷", "恢复观察到它会按规则", "工作流及其步骤已因", "写了一条备注",
                   "返回工作流页面")
    case = client.get(f"/workflows/{built.workflow_id}/case-file.json", headers={"Accept-Language": "zh-Hans"}).json()
    summaries = [e["summary"] for e in case["events"]]
    assert summaries[0].startswith("工作流已创建") and any("暂停" in s for s in summaries)
    page = zh(client, f"/workflows/{built.workflow_id}/")
    assert "案卷：按顺序列出全部事件（可打印）" in page


def test_the_analytics_speak_chinese(wms, client, personas, audit_truncate_allowed):
    from console.analytics.tasks import refresh_analytics
    from recovery.demo.warehouse import WarehouseBuilder

    pause(WarehouseBuilder(), "RECOVERY_JOB_MISSING", datetime.now(UTC) - timedelta(hours=5), ended_after=10)
    pause(WarehouseBuilder(space_prefix="B"), "RECOVERY_JOB_MISMATCH", datetime.now(UTC) - timedelta(hours=3))
    with connection.cursor() as cursor:  # a space the pattern does not split
        cursor.execute("UPDATE alg.tidy_step SET cargo_space_id = 'DOCK-7' WHERE cargo_space_id LIKE 'B%%'")
    refresh_analytics()  # the page reads the newest computation (schedule tidy-analytics)
    client.force_login(personas["shiftlead"])
    html = zh(client, "/analytics/")
    assert_chinese(html, "暂停等待人工处理的时长", "确认用时", "解决用时", "按巷道", "按班次", "逐周", "最近 7 天",
                   "其他（SPACE_CODE_PATTERN 无法拆分的货位码）", "（另有 1 个未结束）")
    bad = zh(client, "/analytics/", {"format": "xls"}, status=400)
    assert_chinese(bad, "format: ", allow={"format", "xls"})
