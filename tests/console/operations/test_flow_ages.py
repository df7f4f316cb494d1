"""/flow/ shows the active jobs' age percentiles (the very numbers /metrics exposes) and how long
the tidy jobs finished in the last hour took, in English and zh-Hans, in the page and its fragment."""

import re

import pytest
from django.urls import reverse

from console.readers.flow import active_job_ages, completed_job_durations
from tests.console.operations.test_metrics import scrape, value
from tests.console.test_languages_floor_pages import EN, chinese, left_on, page
from tests.wcs_helpers import rows

CELL = re.compile(r'<td data-label="([^"]*)"(?: data-seconds="(\d+)")?>([^<]*)</td>')


def cells(html: str, row_id: str) -> list[tuple[str, str | None, str]]:
    row = re.search(rf'<tr id="{row_id}">(.*?)</tr>', html, re.S)
    assert row, f"no row #{row_id}"
    return CELL.findall(row.group(1))


def seconds(html: str, row_id: str) -> list[int | None]:
    """The median, 95th percentile and longest cells of a row, in whole seconds (None: a dash)."""
    return [int(s) if s else None for _, s, _ in cells(html, row_id)[2:]]


def active_jobs(*ages_min: float, in_or_out: int = 28) -> None:
    for i, minutes in enumerate(ages_min):
        rows("INSERT INTO mydo_job (job_id, in_or_out, status, tray_code, cargo_space_id, target_cargo_space_id, "
             "created_at) VALUES (%s, %s, 2, 'T', 'S', 'G', now() - make_interval(secs => %s))",
             [f"A-{in_or_out}-{i}", in_or_out, minutes * 60])


def finished_jobs(*took_and_finished_min: tuple[float, float]) -> None:
    for i, (took, finished_ago) in enumerate(took_and_finished_min):
        rows("INSERT INTO mydo_job_finish (job_id, in_or_out, status, tray_code, cargo_space_id, "
             "target_cargo_space_id, created_at, finished_at) VALUES (%s, 28, 4, 'T', 'S', 'G', "
             "now() - make_interval(secs => %s), now() - make_interval(secs => %s))",
             [f"F-{i}", (took + finished_ago) * 60, finished_ago * 60])


def test_it_shows_the_active_job_ages_the_metrics_expose(wms, supervisor_client, client):
    active_jobs(1, 2, 3, 4, 20)
    active_jobs(300, in_or_out=1)  # not a tidy move
    html = supervisor_client.get(reverse("flow-health")).content.decode()
    samples = scrape(client)

    shown = seconds(html, "active-job-ages")
    exposed = [value(samples, "tidy_active_job_age_seconds", quantile=q) for q in ("0.5", "0.95", "1")]
    assert shown == pytest.approx(exposed, abs=2)
    assert shown == pytest.approx([180, 1008, 1200], abs=2)
    assert cells(html, "active-job-ages")[1][2] == "5"
    assert [text for _, _, text in cells(html, "active-job-ages")[2:]] == ["3 min", "16 min", "20 min"]


def test_it_shows_how_long_the_jobs_finished_in_the_last_hour_took(wms, supervisor_client):
    # (minutes from creation to finish, finished this many minutes ago)
    finished_jobs((2, 5), (4, 10), (6, 30), (40, 50), (500, 90))  # the last one finished before the hour
    durations = completed_job_durations()
    assert durations.jobs == 4
    assert (durations.p50, durations.p95, durations.longest) == pytest.approx((300, 40 * 60 - 0.15 * 34 * 60, 2400),
                                                                               abs=1)
    html = supervisor_client.get(reverse("flow-health")).content.decode()
    assert cells(html, "completed-job-durations")[1][2] == "4"
    assert seconds(html, "completed-job-durations") == pytest.approx([300, 2094, 2400], abs=1)


def test_it_shows_dashes_when_there_is_no_job(wms, supervisor_client):
    assert active_job_ages().jobs == 0 and active_job_ages().quantiles() == {"0.5": 0, "0.95": 0, "1": 0}
    html = supervisor_client.get(reverse("flow-health")).content.decode()
    for row_id in ("active-job-ages", "completed-job-durations"):
        assert [(n, text) for _, n, text in cells(html, row_id)[1:]] == [("", "0"), ("", "—"), ("", "—"), ("", "—")]


def test_the_live_fragment_carries_the_ages(wms, supervisor_client):
    active_jobs(10)
    response = supervisor_client.get(reverse("flow-health"), headers={"HX-Request": "true"})
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="flow-live"')
    assert seconds(html, "active-job-ages") == pytest.approx([600, 600, 600], abs=2)


def test_the_ages_speak_chinese(wms, supervisor_client):
    active_jobs(1, 30)
    finished_jobs((3, 5))
    html = page(supervisor_client, reverse("flow-health"))
    assert left_on(html) == []
    chinese(html, "作业等待时长与完成耗时", "中位数", "第 95 百分位", "最长", "活动作业：自创建以来的时长",
            "最近一小时完成的作业：从创建到完成", 'data-label="数量"')
    english = page(supervisor_client, reverse("flow-health"), headers=EN)
    assert "Job ages and durations" in english and "Finished in the last hour: created to finished" in english
