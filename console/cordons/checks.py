"""System checks: cordons and their lifts stay append-only (migration recovery 0008_cordons's
triggers). ConsoleConfig.ready() registers them."""

from console.checks import append_only_check

check_cordons_are_append_only = append_only_check(
    subject="Cordons", table="recovery_cordon", migration="0008_cordons", error_id="console.E150",
    inspect_error_id="console.E151", app="recovery")

check_cordon_lifts_are_append_only = append_only_check(
    subject="Cordon lifts", table="recovery_cordonlift", migration="0008_cordons", error_id="console.E152",
    inspect_error_id="console.E153", app="recovery")
