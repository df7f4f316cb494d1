"""Tooling that stands in for the WCS during demos, tests and the replay."""
