"""One workflow's case file: every event of its journals in one order, as JSON and as a
self-contained printable page (docs/architecture.md §16)."""
