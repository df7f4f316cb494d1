"""The aisle of a cargo space code for the console's groups and filters: the recovery core's
(recovery/engine/places.py), with `other` for a code the pattern does not split (or no code), so every
workflow falls in some group."""

from recovery.engine.places import aisle_of as split_aisle

OTHER = "other"  # the aisle of a code the pattern does not split


def aisle_of(code: str | None) -> str:
    """The aisle of a space code by SPACE_CODE_PATTERN; `other` when it does not match (or no code)."""
    aisle = split_aisle(code) if code else None
    return OTHER if aisle is None else aisle
