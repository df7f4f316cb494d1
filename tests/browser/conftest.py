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
def browser_context_args(browser_context_args):
    # The console follows the browser's language: these tests read English, whatever the machine's locale.
    return {**browser_context_args, "locale": "en-US"}


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


# A page's own HTTP error status (a 403 or 404 a test asks for) is logged by Chromium as a
# failed resource; that is the answer under test, not a fault of the page.
EXPECTED_HTTP_ERRORS = "Failed to load resource: the server responded with a status of 4"


@pytest.fixture(autouse=True)
def no_browser_errors(request):
    """Any error in the browser console (a Content Security Policy violation included: an inline
    script, style or handler, or an eval) or an uncaught exception fails the test."""
    if "page" not in request.fixturenames:
        yield
        return
    page = request.getfixturevalue("page")
    errors = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error"
            and not msg.text.startswith(EXPECTED_HTTP_ERRORS) else None)
    page.on("pageerror", lambda exc: errors.append(f"uncaught: {exc}"))
    yield
    assert errors == [], "browser console errors:\n" + "\n".join(errors)
