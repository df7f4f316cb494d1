"""What a reader sees on a page, and which of it is still English.

The zh-Hans tests render a page in Chinese and ask `english_left(html)` for the words that are
still English. Codes are data, not language, and stay as they are: text inside <code>, <kbd>,
<samp>, <pre>, <script>, <style> and any element marked `translate="no"` is skipped, and so is
any word that holds a digit, an underscore or is written in capitals (reason codes, tray and
space codes, ids, WMS, CSV). `allow` names the data words a test put on the page itself
(user names, free-text reasons, notes).
"""

import re
from html.parser import HTMLParser

# Names of things, kept in every language.
PROPER_NOUNS = frozenset({"PostgreSQL", "Prometheus", "Grafana", "Chromium", "Django", "htmx", "English",
                          "Tidy", "Recovery", "Console",
                          # the sign-in sources (design §14): protocol and product names
                          "OpenID", "Connect", "Active", "Directory"})
SKIPPED_ELEMENTS = frozenset({"code", "kbd", "samp", "pre", "script", "style", "template", "svg"})
VOID_ELEMENTS = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
                           "track", "wbr"})
# Attributes a reader meets: read aloud, shown on hover, or written inside a field.
READ_ATTRIBUTES = ("title", "aria-label", "placeholder", "alt")
WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]*[A-Za-z]|[A-Za-z]")


class _VisibleText(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[bool] = []  # per open element: is its text skipped?
        self.parts: list[str] = []

    def _skipping(self) -> bool:
        return bool(self.stack) and self.stack[-1]

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        skipped = self._skipping() or tag in SKIPPED_ELEMENTS or values.get("translate") == "no" \
            or "hidden" in values
        if not skipped:
            self.parts.extend(values[name] for name in READ_ATTRIBUTES if values.get(name))
            if tag == "input" and values.get("type") in ("submit", "button") and values.get("value"):
                self.parts.append(values["value"])
        if tag not in VOID_ELEMENTS:
            self.stack.append(skipped)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID_ELEMENTS and self.stack:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag not in VOID_ELEMENTS and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if not self._skipping() and data.strip():
            self.parts.append(data)


def visible_text(html: str) -> list[str]:
    """The page's text nodes and read attributes, outside skipped elements, in document order."""
    parser = _VisibleText()
    head_end = html.find("</head>")
    parser.feed(html[head_end:] if head_end >= 0 else html)
    return [" ".join(part.split()) for part in parser.parts]


def _is_code(word: str) -> bool:
    return word.isupper() or any(ch.isdigit() or ch == "_" for ch in word)


def english_left(html: str, allow: tuple[str, ...] | set[str] = ()) -> list[str]:
    """The pieces of visible text that still hold an English word, each once, in page order."""
    allowed = PROPER_NOUNS | set(allow)
    left: list[str] = []
    for part in visible_text(html):
        for token in part.split():
            if _is_code(token) or token in allowed:
                continue
            if any(not _is_code(word) and word not in allowed for word in WORD.findall(token)):
                if part not in left:
                    left.append(part)
                break
    return left
