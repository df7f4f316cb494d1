"""How the engine runs (docs/architecture.md §7, §18): the django-q2 runner and its schedule, the
shard leases, the processes' heartbeats, the start-up cycle and journal retention."""
