"""The aisle of a cargo space code, as SPACE_CODE_PATTERN splits it (docs/user-guide.md, "Rack map"): what a
cordon on an aisle refuses by (recovery/engine/cordons.py), what notifications group and silences match
by, and what the paused list filters by (console/readers/places.py). The rack map's own parser
(console/rack_map/drawing.py) splits the same codes further into level and position."""

import re
from functools import lru_cache

from django.conf import settings


@lru_cache(maxsize=8)
def _compiled(pattern: str) -> re.Pattern:
    return re.compile(pattern)


@lru_cache(maxsize=65_536)
def _aisle(code: str, pattern: str) -> str | None:
    m = _compiled(pattern).search(code)
    return None if m is None else m.group("aisle")


def aisle_of(code: str) -> str | None:
    """The aisle of a space code by SPACE_CODE_PATTERN, or None when it does not match."""
    return _aisle(code, settings.SPACE_CODE_PATTERN)
