"""System checks: acknowledgements (migration console 0003_notifications's triggers) and silences
with their endings (0012_notification_silences's) stay append-only. ConsoleConfig.ready()
registers them."""

from console import console_sql
from console.checks import append_only_check

check_acknowledgements_are_append_only = append_only_check(
    subject="Notification acknowledgements", table="console_notificationacknowledgement",
    table_exists=console_sql.ACKNOWLEDGEMENT_TABLE_EXISTS, triggers_present=console_sql.ACKNOWLEDGEMENT_TRIGGERS,
    migration="0003_notifications", error_id="console.E110", inspect_error_id="console.E111")

check_silences_are_append_only = append_only_check(
    subject="Silences", table="console_silence",
    table_exists=console_sql.SILENCE_TABLE_EXISTS, triggers_present=console_sql.SILENCE_TRIGGERS,
    migration="0012_notification_silences", error_id="console.E130", inspect_error_id="console.E131")

check_silence_endings_are_append_only = append_only_check(
    subject="Silence endings", table="console_silenceending",
    table_exists=console_sql.SILENCE_ENDING_TABLE_EXISTS, triggers_present=console_sql.SILENCE_ENDING_TRIGGERS,
    migration="0012_notification_silences", error_id="console.E132", inspect_error_id="console.E133")
