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


def assert_fits(page) -> None:
    """No sideways scrolling: the document is no wider than the window."""
    scroll, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert scroll <= inner, f"{page.url} scrolls sideways: {scroll}px wide in a {inner}px window"
