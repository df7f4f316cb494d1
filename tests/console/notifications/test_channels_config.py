"""NOTIFY_CHANNELS_FILE (design §15): every field of a [[channel]] is checked at start-up; a bad
file stops the program naming the channel and the field; secrets come inline or from files and
are never shown."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.checks import run_checks

from console.notifications.channels.config import ChannelFileError, load_channels, parse_channels

ROOT = Path(__file__).resolve().parents[3]
LANGUAGES = ["en", "zh-hans"]


def parse(text: str, **kw):
    return parse_channels(text, path="channels.toml", languages=LANGUAGES, default_language="en", **kw)


def test_a_file_with_every_kind_is_read_with_its_defaults_and_secret_files(tmp_path):
    (tmp_path / "wecom.url").write_text("https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=K-1\n")
    (tmp_path / "ding.secret").write_text("SECsecret\n")
    channels = parse(f"""
[[channel]]
name = "floor-wecom"
kind = "wecom"
url_file = "{tmp_path / 'wecom.url'}"
language = "zh-Hans"

[[channel]]
name = "floor-dingtalk"
kind = "dingtalk"
url = "https://oapi.dingtalk.com/robot/send?access_token=T-1"
secret_file = "{tmp_path / 'ding.secret'}"
min_severity = "warning"
events = ["paused", "stalled"]
escalation_only = true
mention = ["13800000000"]

[[channel]]
name = "lark"
kind = "feishu"
url = "https://open.feishu.cn/open-apis/bot/v2/hook/H-1"

[[channel]]
name = "ops.slack"
kind = "slack"
url = "https://hooks.slack.com/services/T/B/X"

[[channel]]
name = "ops_teams"
kind = "teams"
url = "https://prod-01.westeurope.logic.azure.com/workflows/W/triggers/manual/paths/invoke?sig=S"

[[channel]]
name = "hook-2"
kind = "webhook"
url = "http://alerts.warehouse.example/hooks/tidy"
""", events=("paused", "stalled"))
    wecom, ding, lark, slack, teams, hook = channels
    assert (wecom.url, wecom.language, wecom.min_severity, wecom.events, wecom.mention) == (
        "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=K-1", "zh-hans", "info", (), ())
    assert (ding.secret, ding.min_severity, ding.events, ding.escalation_only, ding.mention) == (
        "SECsecret", "warning", ("paused", "stalled"), True, ("13800000000",))
    assert [c.kind for c in channels] == ["wecom", "dingtalk", "feishu", "slack", "teams", "webhook"]
    assert (lark.language, lark.secret, lark.escalation_only) == ("en", "", False)
    # What pages and the journal show: the host, never the token or the secret.
    assert (wecom.host, slack.host, hook.host) == ("qyapi.weixin.qq.com", "hooks.slack.com", "alerts.warehouse.example")
    assert ding.shown_url == "https://oapi.dingtalk.com/…"
    assert "T-1" not in repr(ding) and "SECsecret" not in repr(ding) and "sig=S" not in repr(teams)


def test_filters_choose_what_a_channel_takes():
    (c,) = parse("""
[[channel]]
name = "leads"
kind = "wecom"
url = "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=K"
min_severity = "error"
events = ["paused"]
""")
    assert not c.takes(event="paused", severity="warning", escalated=False)
    assert c.takes(event="paused", severity="critical", escalated=True)
    assert not c.takes(event="stalled", severity="critical", escalated=True)
    (only,) = parse("""
[[channel]]
name = "esc"
kind = "slack"
url = "https://hooks.slack.com/services/T/B/X"
escalation_only = true
""")
    assert not only.takes(event="paused", severity="critical", escalated=False)
    assert only.takes(event="paused", severity="critical", escalated=True)


GOOD = 'name = "floor"\nkind = "dingtalk"\nurl = "https://oapi.dingtalk.com/robot/send?access_token=T"\n'


@pytest.mark.parametrize("body,message", [
    ('name = "floor"\nkind = "telegram"\nurl = "https://x.example/"', "channel 'floor', field 'kind': must be one of"),
    ('name = "floor"\nkind = "wecom"', "channel 'floor', field 'url': must be an http:// or https:// URL"),
    ('name = "floor"\nkind = "wecom"\nurl = "ftp://x.example/"', "channel 'floor', field 'url'"),
    ('name = "floor"\nkind = "wecom"\nurl = "https://a.example/"\nurl_file = "/x"',
     "channel 'floor', field 'url': give url or url_file, not both"),
    ('name = "floor"\nkind = "wecom"\nurl_file = "/nonexistent/robot.url"',
     "channel 'floor', field 'url_file': cannot read '/nonexistent/robot.url'"),
    ('name = "floor"\nkind = "slack"\nurl = "https://hooks.slack.com/x"\nsecret = "S"',
     "channel 'floor', field 'secret': only dingtalk and feishu sign"),
    (GOOD + 'language = "fr"', "channel 'floor', field 'language': must be one of en, zh-hans, got 'fr'"),
    (GOOD + 'min_severity = "loud"', "channel 'floor', field 'min_severity': must be one of info, warning"),
    (GOOD + 'events = "paused"', "channel 'floor', field 'events': must be a list"),
    (GOOD + 'escalation_only = "yes"', "channel 'floor', field 'escalation_only': must be true or false"),
    (GOOD + 'mention = [13800000000]', "channel 'floor', field 'mention': must be a list of non-empty strings"),
    (GOOD + 'token = "x"', "channel 'floor', field 'token': is not a channel field"),
    ('kind = "wecom"\nurl = "https://a.example/"', "channel 1, field 'name': is required"),
    ('name = "Floor Group"\nkind = "wecom"\nurl = "https://a.example/"', "channel 1, field 'name': 'Floor Group'"),
    ('name = "email"\nkind = "wecom"\nurl = "https://a.example/"', "channel 1, field 'name': 'email'"),
])
def test_a_bad_channel_is_refused_naming_the_channel_and_the_field(body, message):
    with pytest.raises(ChannelFileError) as refused:
        parse(f"[[channel]]\n{body}\n")
    assert message in str(refused.value)
    assert "access_token=T" not in str(refused.value)


def test_two_channels_of_one_name_and_a_file_that_is_not_toml_are_refused(tmp_path):
    with pytest.raises(ChannelFileError, match="channel 'floor', field 'name': is used by two channels"):
        parse(f"[[channel]]\n{GOOD}\n[[channel]]\n{GOOD}")
    with pytest.raises(ChannelFileError, match="not valid TOML"):
        parse("[[channel]\nname = 1")
    with pytest.raises(ChannelFileError, match="unknown table 'channels'"):
        parse("[[channels]]\nname = 'x'")
    with pytest.raises(ChannelFileError, match="cannot read"):
        load_channels(str(tmp_path / "missing.toml"), languages=LANGUAGES, default_language="en")
    assert load_channels("", languages=LANGUAGES, default_language="en") == ()


def test_a_channel_naming_an_unknown_event_fails_the_system_check(settings):
    settings.NOTIFY_CHANNELS = parse(f"[[channel]]\n{GOOD}events = [\"paused\", \"pasued\"]\n")
    errors = [e for e in run_checks() if e.id == "console.E140"]
    assert [e.msg for e in errors] == [
        "NOTIFY_CHANNELS_FILE: channel 'floor', field 'events': 'pasued' is not an event (known: paused, "
        "paused_too_long, stalled, recovery_stale, proposal_waiting, backlog_not_draining)"]
    settings.NOTIFY_CHANNELS = parse(f"[[channel]]\n{GOOD}events = [\"paused\"]\n")
    assert [e for e in run_checks() if e.id == "console.E140"] == []


def test_a_file_without_channels_is_a_warning_naming_the_variable(settings):
    settings.NOTIFY_CHANNELS_FILE, settings.NOTIFY_CHANNELS = "/etc/tidy/channels.toml", parse("")
    (warning,) = [e for e in run_checks() if e.id == "console.W141"]
    assert warning.msg.startswith("NOTIFY_CHANNELS_FILE /etc/tidy/channels.toml lists no [[channel]]")
    settings.NOTIFY_CHANNELS_FILE = ""
    assert [e for e in run_checks() if e.id == "console.W141"] == []


def _manage(*args, **env):
    full_env = {k: v for k, v in os.environ.items() if k not in {"EMBEDDED_DATABASE_URL", "TIDY_TEST_OWNS_EMBEDDED_DB"}}
    full_env.update(env, DJANGO_SETTINGS_MODULE="console.settings")
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=full_env, capture_output=True,
                          text=True, timeout=120)


def test_a_bad_file_stops_start_up_naming_the_channel_and_the_field(tmp_path):
    path = tmp_path / "channels.toml"
    path.write_text('[[channel]]\nname = "floor-dingtalk"\nkind = "dingtalk"\n'
                    'url = "https://oapi.dingtalk.com/robot/send?access_token=SECRET-TOKEN"\nlanguage = "de"\n')
    result = _manage("check", SECRET_KEY="x" * 50, DATABASE_URL="postgresql://localhost/tidy",
                     WCS_CALLBACK_TOKEN="t" * 24, NOTIFY_CHANNELS_FILE=str(path))
    assert result.returncode != 0 and "ChannelFileError: NOTIFY_CHANNELS_FILE" in result.stderr
    assert "channel 'floor-dingtalk', field 'language': must be one of en, zh-hans, got 'de'" in result.stderr
    assert "SECRET-TOKEN" not in result.stderr
