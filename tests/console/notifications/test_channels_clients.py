"""The vendor clients' pure parts (design §15): each vendor's success rule and the cut that keeps
a message within the vendor's size with its links. Sending is tested end to end against the
robot-like receivers (test_channels_delivery.py)."""

import pytest

from console.notifications.channels import dingtalk, feishu, slack, teams, webhook, wecom
from console.notifications.channels.base import CUT_MARK, cut


@pytest.mark.parametrize("client,status,body,ok,code", [
    (wecom, 200, b'{"errcode":0,"errmsg":"ok"}', True, ""),
    (wecom, 200, b'{"errcode":93000,"errmsg":"invalid webhook url"}', False, "93000"),
    (dingtalk, 200, b'{"errcode":310000,"errmsg":"sign not match"}', False, "310000"),
    (dingtalk, 200, b'{"errcode":130101,"errmsg":"send too fast"}', False, "130101"),
    (dingtalk, 502, b'{"errcode":0}', False, "0"),  # HTTP 200 is part of the rule
    (dingtalk, 200, b"<html>proxy login</html>", False, "200"),
    (dingtalk, 200, b'{"errcode":false}', False, "False"),
    (feishu, 200, b'{"code":0,"msg":"success","data":{}}', True, ""),
    (feishu, 200, b'{"code":19021,"msg":"sign match fail"}', False, "19021"),
    (feishu, 200, b'{"errcode":0}', False, "200"),  # Feishu's key is `code`
    (slack, 200, b"ok", True, ""),
    (slack, 404, b"no_service", False, "no_service"),
    (slack, 429, b"rate_limited", False, "rate_limited"),
    (slack, 200, b"<html>", False, "<html>"),
    (teams, 202, b"", True, ""),
    (teams, 400, b"bad", False, "400"),
    (webhook, 204, b"", True, ""),
    (webhook, 500, b"", False, "500"),
])
def test_each_vendors_success_rule(client, status, body, ok, code):
    answer = client.answer(status, body)
    assert (answer.ok, answer.code) == (ok, code)


def test_a_message_that_fits_is_left_whole():
    assert cut("a\nb", "[x](u)", 100) == "a\nb\n\n[x](u)"


def test_a_long_message_loses_whole_lines_from_its_end_and_keeps_its_links():
    body = "\n".join(f"line {i}" for i in range(100))
    links = "- [Open](https://console.example/paused/?aisle=A01)\n- [Acknowledge](https://console.example/n/)"
    text = cut(body, links, 200)
    assert len(text.encode()) <= 200 and text.endswith(links)
    kept = text.split(f"\n{CUT_MARK}\n")[0].split("\n")
    assert kept == [f"line {i}" for i in range(len(kept))] and len(kept) > 3


def test_one_long_first_line_is_cut_on_a_character_boundary():
    text = cut("巷" * 3000, "[确认](https://console.example/)", 4096)
    assert len(text.encode()) <= 4096 and text.endswith("[确认](https://console.example/)")
    assert set(text.split("\n")[0]) == {"巷"}


def test_slack_text_escapes_its_control_characters():
    assert slack.escape("<!channel> & co") == "&lt;!channel&gt; &amp; co"
