"""System check: workflow notes stay append-only (migration console 0003_workflow_notes's triggers).
ConsoleConfig.ready() registers it."""

from console.checks import append_only_check

check_notes_are_append_only = append_only_check(
    subject="Workflow notes", table="console_workflownote", migration="0003_workflow_notes", error_id="console.E120",
    inspect_error_id="console.E121")
