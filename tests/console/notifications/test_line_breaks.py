"""Text from the WMS or the WCS never starts a line of its own in a message: a pause reason with
line breaks goes out with them shown escaped in the e-mail body and in the log line, never as a
forged "Open:" line before the real one."""

import io
import json
import logging

import pytest
from django.utils.module_loading import import_string

from console.notifications.delivery import deliver_pending
from console.notifications.evaluate import evaluate_notifications
from recovery.logs.line_breaks import escape_line_breaks
from recovery.logs.logcontext import ContextFilter, logging_config
from tests.notification_support import *  # noqa: F403  (fixtures)
from tests.notification_support import recovery_is_fresh

FORGED = "RECOVERY_JOB_MISSING\n\nOpen: https://evil.example/phish"
ESCAPED = "RECOVERY_JOB_MISSING\\n\\nOpen: https://evil.example/phish"
SEPARATORS = ["\r", "\n", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]


@pytest.fixture(autouse=True)
def no_group_wait(settings):
    settings.NOTIFY_GROUP_WAIT_SECONDS = 0
    settings.NOTIFY_PAUSED_TOO_LONG_MINUTES = 10_000


@pytest.mark.parametrize("separator", SEPARATORS)
def test_every_line_separator_is_shown_escaped_and_the_text_stays_on_one_line(separator):
    text = escape_line_breaks(f"RECOVERY_JOB_MISSING{separator}Open: https://evil.example/phish")
    assert len(text.splitlines()) == 1 and text.startswith("RECOVERY_JOB_MISSING\\")
    assert escape_line_breaks("tray T1\tA01-02-03 100% ok") == "tray T1\tA01-02-03 100% ok"  # nothing else changes


def test_a_forged_line_in_a_pause_reason_is_only_escaped_in_the_e_mail_body(notify_db, smtp_server, settings):
    settings.NOTIFY_EMAIL_TO = ["floor@warehouse.example"]
    recovery_is_fresh()
    built = notify_db.build("paused", reason=FORGED)
    evaluate_notifications()
    assert deliver_pending().sent == 1

    (mail,) = smtp_server.messages
    body = mail.message.get_payload(decode=True).decode(mail.message.get_content_charset())
    lines = body.splitlines()
    assert not [line for line in lines if line.startswith("Open: https://evil")]
    opens = [line for line in lines if line.startswith("Open: ")]
    assert opens == [line for line in lines if line.startswith("Open: http://127.0.0.1:8000/")] and len(opens) == 1
    assert ESCAPED in body and FORGED not in body
    assert f"Workflow {built.workflow_id} paused: {ESCAPED}" in lines  # the subject's line in the body


def test_a_forged_line_in_a_pause_reason_is_only_escaped_in_the_chat_message(notify_db, webhook_receiver):
    recovery_is_fresh()
    built = notify_db.build("paused", reason=FORGED)
    evaluate_notifications()
    assert deliver_pending().sent == 1

    (hook,) = [r.json() for r in webhook_receiver.requests]
    assert hook["subject"] == f"Workflow {built.workflow_id} paused: {ESCAPED}"  # the text a chat shows
    assert len(hook["subject"].splitlines()) == 1
    assert hook["reason"] == FORGED  # the data itself stays what the WMS holds


@pytest.fixture
def log_output():
    """The project's formatters (text and JSON, as configured) on the root logger."""
    outputs = {}
    handlers = []
    root = logging.getLogger()
    for log_format in ("text", "json"):
        spec = dict(logging_config(log_format=log_format)["formatters"][log_format])
        formatter = import_string(spec.pop("()"))(**({"fmt": spec.pop("format")} if "format" in spec else spec))
        outputs[log_format] = io.StringIO()
        handler = logging.StreamHandler(outputs[log_format])
        handler.setFormatter(formatter)
        handler.addFilter(ContextFilter())
        root.addHandler(handler)
        handlers.append(handler)
    previous = root.level
    root.setLevel(logging.INFO)
    yield outputs
    for handler in handlers:
        root.removeHandler(handler)
    root.setLevel(previous)


def _json_values(output: io.StringIO) -> list[str]:
    return [value for line in output.getvalue().splitlines() for value in json.loads(line).values()
            if isinstance(value, str)]


def test_a_forged_line_in_a_pause_reason_is_only_escaped_in_the_log_lines(notify_db, log_output):
    recovery_is_fresh()
    notify_db.build("paused", reason=FORGED)
    evaluate_notifications()
    assert deliver_pending().sent == 1  # no channel configured: the log line is the message

    values = _json_values(log_output["json"])
    assert any(ESCAPED in value for value in values)  # the dedup key names the reason
    assert all(len(value.splitlines()) <= 1 for value in values)  # a decoded value prints on one line
    assert not [line for line in log_output["text"].getvalue().splitlines() if line.startswith("Open: https://evil")]


def test_a_logged_value_never_starts_a_line_in_either_format(log_output):
    logging.getLogger("recovery.cycle").warning("workflow %s paused with %s", 7, FORGED,
                                                extra={"reason": FORGED, "tray_code": "T1\u2028Open: x"})
    text = log_output["text"].getvalue()
    assert len(text.splitlines()) == 1 and ESCAPED in text
    (line,) = log_output["json"].getvalue().splitlines()
    entry = json.loads(line)
    assert entry["message"] == f"workflow 7 paused with {ESCAPED}" and entry["reason"] == ESCAPED
    assert entry["tray_code"] == "T1\\u2028Open: x"
