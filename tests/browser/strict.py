"""Strict watching of a browser page: every console error, uncaught page error, failed request
and 4xx/5xx response is collected so a test can assert none happened. The browser tests collect
these themselves, whatever the shared browser fixtures do."""

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
DESKTOP = {"viewport": {"width": 1280, "height": 800}}
VIEWPORTS = {"desktop": DESKTOP, "phone": PHONE}


def watch(page) -> list[str]:
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.method} {r.url} {r.failure}"))
    page.on("response", lambda r: problems.append(f"response {r.status}: {r.request.method} {r.url}")
            if r.status >= 400 else None)
    return problems


def sideways_overflow(page, width: int | None = None) -> int:
    """How many pixels the document is wider than the window (or than `width`, since a page wider
    than a phone makes the browser zoom out and innerWidth grows past it). It waits for the load
    event first: a heading can be laid out before a page's own stylesheet has arrived, and a
    measure taken then is of the unstyled page."""
    page.wait_for_load_state("load")
    return page.evaluate("w => Math.max(document.documentElement.scrollWidth, window.innerWidth) - (w ?? innerWidth)",
                         width)


def assert_fits(page) -> None:
    """No sideways scrolling: the document is no wider than the window."""
    overflow = sideways_overflow(page)
    assert overflow <= 0, f"{page.url} scrolls sideways by {overflow}px"
