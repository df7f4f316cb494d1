"""The aisle of a cargo space code (SPACE_CODE_PATTERN, README "Rack map"): what notifications
group and silences match by, and what the paused list filters by. Shared by several features,
so it lives with the readers; the rack map's own parser (console/rack_map/drawing.py) splits the
same codes further into level and position."""

import re
from functools import lru_cache

from django.conf import settings

OTHER = "other"  # the aisle of a code the pattern does not split


@lru_cache(maxsize=8)
def _compiled(pattern: str) -> re.Pattern:
    return re.compile(pattern)


@lru_cache(maxsize=65_536)
def _aisle(code: str, pattern: str) -> str:
    m = _compiled(pattern).search(code)
    return m.group("aisle") if m is not None else OTHER


def aisle_of(code: str | None) -> str:
    """The aisle of a space code by SPACE_CODE_PATTERN; `other` when it does not match (or no code)."""
    return _aisle(code, settings.SPACE_CODE_PATTERN) if code else OTHER
