"""/analytics/: how long pauses wait for a person, for shift leads (docs/architecture.md §16)."""
