"""System checks: acknowledgements (migration console 0003_notifications's triggers) and silences
with their endings (0012_notification_silences's) stay append-only. ConsoleConfig.ready()
registers them."""

from console.checks import append_only_check

check_acknowledgements_are_append_only = append_only_check(
    subject="Notification acknowledgements", table="console_notificationacknowledgement",
    migration="0003_notifications", error_id="console.E110", inspect_error_id="console.E111")

check_silences_are_append_only = append_only_check(
    subject="Silences", table="console_silence",
    migration="0012_notification_silences", error_id="console.E130", inspect_error_id="console.E131")

check_silence_endings_are_append_only = append_only_check(
    subject="Silence endings", table="console_silenceending",
    migration="0012_notification_silences", error_id="console.E132", inspect_error_id="console.E133")
