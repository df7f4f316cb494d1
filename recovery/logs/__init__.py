"""Recovery's log lines (docs/architecture.md §17): the JSON fields and the non-blocking queue
(logcontext), one line per outcome (oplog), dropped lines counted (logdrops), line breaks escaped."""
