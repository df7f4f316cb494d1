"""System check: acknowledgements stay append-only (migration console 0003_notifications's
triggers). ConsoleConfig.ready() registers it."""

from console import console_sql
from console.checks import append_only_check

check_acknowledgements_are_append_only = append_only_check(
    subject="Notification acknowledgements", table="console_notificationacknowledgement",
    table_exists=console_sql.ACKNOWLEDGEMENT_TABLE_EXISTS, triggers_present=console_sql.ACKNOWLEDGEMENT_TRIGGERS,
    migration="0003_notifications", error_id="console.E110", inspect_error_id="console.E111")
