"""Browser tests: Playwright drives Debian's Chromium (/usr/bin/chromium), never a downloaded one.

scripts/test installs the `chromium` package when it is missing. Screenshots go to
test-artifacts/ (git-ignored)."""

import os
from pathlib import Path

import pytest

# The sync Playwright API runs an event loop in the test thread; Django's ORM refuses to run
# inside one unless told that this (single-threaded test) use is safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"]


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: run scripts/test (it installs Debian's chromium "
                    "package) or `apt-get install chromium`", pytrace=False)
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS, "headless": True}


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
