"""/help/: the guides of docs/ in the page frame, in the reader's language, with anchors as a Git host
makes them, links between guides that work in the console, and nothing of the Markdown's raw HTML.
The guides here are written into a temporary folder (settings.BASE_DIR), so these tests do not
depend on the words of the real guides (tests/ops/test_docs.py checks those)."""

import os
import struct
import zlib

import pytest
from django.urls import reverse

from console.help import guides
from recovery.engine.decisions import Reason
from tests.console.test_languages_console_pages import assert_chinese, zh

USER_GUIDE = """# User guide

Read [the operations guide](operations.md#backups), [the WCS guide](wcs-integration.md) or [below](#paused-workflows).
Start it with [`scripts/run`](../scripts/run) or [the run script](../scripts/run); see [Django](https://www.djangoproject.com/).

![The paused list](images/paused-list.png) ![elsewhere](https://example.com/x.png)

## Paused workflows

<script>alert(1)</script> <b>bold</b> [bad](javascript:alert(1))

| Column | Meaning |
|---|---|
| Reason | Why it paused |

### RECOVERY_JOB_MISSING

### `RECOVERY_JOB_MISSING` again: what, now?

## Paused workflows

## 暂停的工作流（说明）
"""
ZH_GUIDE = """# 用户指南

## 暂停原因

### RECOVERY_JOB_MISSING

见[运维指南](operations.md#backups)。
"""


def png(width: int = 2, height: int = 1) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\0" + b"\xff\xff\xff" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


@pytest.fixture
def docs(settings, tmp_path):
    """A repository whose docs/ holds a user guide in both languages, the operations guide and an image."""
    settings.BASE_DIR = tmp_path
    folder = tmp_path / "docs"
    (folder / "images").mkdir(parents=True)
    (folder / "user-guide.md").write_text(USER_GUIDE, encoding="utf-8")
    (folder / "user-guide.zh-Hans.md").write_text(ZH_GUIDE, encoding="utf-8")
    (folder / "operations.md").write_text("# Operations guide\n\n## Backups\n\nDaily.\n", encoding="utf-8")
    (folder / "images" / "paused-list.png").write_bytes(png())
    (tmp_path / "secret.png").write_bytes(png())
    return folder


def test_it_gives_headings_the_anchors_a_git_host_gives_them():
    assert guides.github_slug("RECOVERY_JOB_MISSING") == "recovery_job_missing"
    assert guides.github_slug("7. Schedule, leases and shards") == "7-schedule-leases-and-shards"
    assert guides.github_slug("What — now?") == "what--now"
    assert guides.github_slug("暂停的工作流（说明）") == "暂停的工作流说明"
    assert [anchor for _, _, anchor in guides.headings(USER_GUIDE)] == [
        "user-guide", "paused-workflows", "recovery_job_missing", "recovery_job_missing-again-what-now",
        "paused-workflows-1", "暂停的工作流说明"]
    assert guides.headings("```\n# not a heading\n```\n") == []


def test_it_lists_every_link_and_image_of_a_text():
    assert guides.links(USER_GUIDE) == [
        "operations.md#backups", "wcs-integration.md", "#paused-workflows", "../scripts/run", "../scripts/run",
        "https://www.djangoproject.com/", "images/paused-list.png", "https://example.com/x.png"]


def test_it_renders_markdown_without_its_raw_html_and_with_console_links():
    html = guides.render(USER_GUIDE, name="user-guide", language="en").html
    assert '<h2 id="paused-workflows">Paused workflows</h2>' in html
    assert '<h2 id="paused-workflows-1">Paused workflows</h2>' in html
    assert '<h3 id="recovery_job_missing">RECOVERY_JOB_MISSING</h3>' in html
    assert '<h2 id="暂停的工作流说明">' in html
    assert "<script>" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &lt;b&gt;bold&lt;/b&gt;" in html
    assert "javascript:" not in html.replace("[bad](javascript:alert(1))", "")
    assert 'href="/help/operations/#backups"' in html and 'href="/help/wcs-integration/"' in html
    assert 'href="#paused-workflows"' in html and 'href="https://www.djangoproject.com/"' in html
    # A file outside docs/ cannot be opened here: its path is shown as code, not as a link.
    assert "Start it with <code>scripts/run</code> or the run script (<code>scripts/run</code>);" in html
    assert "../scripts/run" not in html
    assert '<img src="/help/images/paused-list.png" alt="The paused list" />' in html
    assert "example.com/x.png" not in html and " elsewhere</p>" in html
    assert '<div class="table-wrap"><table>' in html


def test_every_console_role_reads_the_user_guide_in_the_page_frame(docs, client, personas):
    for name in ("supervisor", "operator", "shiftlead"):
        client.force_login(personas[name])
        response = client.get(reverse("help"))
        assert response.status_code == 200
        body = response.content.decode()
        assert '<a href="/help/" aria-current="page">Help</a>' in body
        assert '<article class="guide" lang="en">' in body and '<h1 id="user-guide">User guide</h1>' in body
        assert "<title>User guide · Tidy Recovery Console</title>" in body


def test_it_answers_no_one_without_a_console_role(docs, client, personas):
    assert client.get(reverse("help")).status_code == 302
    assert client.get(reverse("help-image", args=["paused-list.png"])).status_code == 302
    client.force_login(personas["norole"])
    for url in (reverse("help"), reverse("help-guide", args=["operations"]),
                reverse("help-image", args=["paused-list.png"])):
        assert client.get(url).status_code == 403, url


def test_a_chinese_reader_gets_the_chinese_guide_and_english_where_there_is_none(docs, supervisor_client):
    html = zh(supervisor_client, reverse("help"))
    assert '<article class="guide" lang="zh-hans">' in html
    assert '<h3 id="recovery_job_missing">RECOVERY_JOB_MISSING</h3>' in html
    assert '<a href="/help/operations/#backups">运维指南</a>' in html
    assert_chinese(html, "用户指南", "暂停原因")
    operations = zh(supervisor_client, reverse("help-guide", args=["operations"]))
    assert '<article class="guide" lang="en">' in operations and '<h2 id="backups">Backups</h2>' in operations
    assert "这份指南还没有你的语言的译本，下面是英文版。" in operations


def test_it_serves_the_other_guides_by_an_allow_list_only(docs, supervisor_client):
    assert supervisor_client.get(reverse("help-guide", args=["operations"])).status_code == 200
    (docs / "notes.md").write_text("# Not served\n", encoding="utf-8")
    for name in ("notes", "user-guide", "development", "operations.md", "..", "README"):
        assert supervisor_client.get(f"/help/{name}/").status_code == 404, name


def test_it_says_so_when_the_user_guide_is_missing(docs, supervisor_client):
    (docs / "user-guide.md").unlink()
    (docs / "user-guide.zh-Hans.md").unlink()
    response = supervisor_client.get(reverse("help"))
    assert response.status_code == 200
    assert "<code>docs/user-guide.md</code> is missing" in response.content.decode()


def test_it_serves_images_of_docs_images_only(docs, supervisor_client):
    response = supervisor_client.get(reverse("help-image", args=["paused-list.png"]))
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert b"".join(response.streaming_content) == png()
    for name in ("secret.png", "..%2Fsecret.png", "PAUSED-LIST.png", "paused-list.svg", ".png", "missing.png"):
        assert supervisor_client.get(f"/help/images/{name}").status_code == 404, name
    assert supervisor_client.get("/help/images/../secret.png").status_code == 404


def test_it_renders_a_guide_once_and_again_when_its_file_changes(docs):
    first = guides.guide("operations", "en")
    assert guides.guide("operations", "en") is first
    path = docs / "operations.md"
    path.write_text("# Operations guide\n\n## Upgrading\n", encoding="utf-8")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    again = guides.guide("operations", "en")
    assert again is not first and 'id="upgrading"' in again.html


def test_every_pause_reason_links_to_its_section_of_the_user_guide(supervisor_client, wms):
    built = wms.build("paused", reason="RECOVERY_JOB_MISSING")
    catalog = supervisor_client.get(reverse("reason-codes")).content.decode()
    for reason in Reason:
        assert f'<a class="guide-link" href="/help/#{reason.value.lower()}">In the user guide</a>' in catalog
        assert f'id="{reason.value}"' in catalog  # the catalog's own anchors stay
    page = supervisor_client.get(reverse("workflow-detail", args=[built.workflow_id])).content.decode()
    assert 'href="/reason-codes/#RECOVERY_JOB_MISSING"' in page
    assert '<a class="guide-link" href="/help/#recovery_job_missing">In the user guide</a>' in page
