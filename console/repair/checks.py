"""System check: the repair audit stays append-only (migration console 0002's triggers).
ConsoleConfig.ready() registers it."""

from console.checks import append_only_check

check_audit_is_append_only = append_only_check(
    subject="The repair audit", table="console_repairaudit", migration="0002", error_id="console.E100",
    inspect_error_id="console.E101")
