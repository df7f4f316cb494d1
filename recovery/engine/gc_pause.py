"""Python's cyclic garbage collector paused around bulk work that builds many objects without
reference cycles: the classification's evidence objects (recovery/engine/evidence.py) and the rack map's
20,000 row tuples (console/rack_map.py). Allocating them sets off collection after collection,
each walking every object the process holds; paused, that work is not done, and collection
resumes (and catches up) as soon as the block ends."""

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Pause collection for the block; a block that finds it already paused (another thread's
    bulk work) leaves resuming it to that one."""
    was_enabled = gc.isenabled()
    if was_enabled:
        gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
