"""A bad notification setting stops the program at start, naming the variable."""

import pytest

from tests.ops.test_configuration import _manage


@pytest.mark.parametrize("env,name", [
    ({"NOTIFY_WEBHOOK_URL": "ftp://alerts.example/hook"}, "NOTIFY_WEBHOOK_URL must start with http:// or https://"),
    ({"ESCALATE_AFTER_MINUTES": "half an hour"}, "ESCALATE_AFTER_MINUTES must be an integer"),
    ({"STALLED_AFTER_MINUTES": "0"}, "STALLED_AFTER_MINUTES must be at least 1"),
    ({"EMAIL_PORT": "smtp"}, "EMAIL_PORT must be an integer"),
])
def test_a_bad_notification_setting_is_named(env, name):
    result = _manage("check", SECRET_KEY="x", DATABASE_URL="postgresql://localhost/tidy",
                     WCS_CALLBACK_TOKEN="t" * 24, **env)
    assert result.returncode != 0
    assert name in result.stderr and "ImproperlyConfigured" in result.stderr
