"""The guides in docs/, read in the console (/help/): the user guide in the reader's language, the
other guides beside it, so a shift lead on a terminal without internet access reads them there.

Markdown is turned into HTML by markdown-it-py (CommonMark with tables). Raw HTML in the Markdown is
shown as text, never passed through, and link targets the library finds unsafe (`javascript:`) are
not linked. What the console adds to its output:

- every heading gets the id a Git host gives it (`github_slug`: lowercase, spaces to '-',
  punctuation dropped, CJK kept; a repeated heading gets -1, -2, ...), so an anchor that works on
  the Git host works here, and the runbook links (`/help/#recovery_job_missing`) land on the
  pause reason's section;
- a link to another served guide (`operations.md#backups`) goes to its page (`/help/operations/#backups`),
  an image under `images/` is served from docs/images/ (`/help/images/x.png`); a link to anything else
  in the repository (`../scripts/run`) is shown as code, not as a link that cannot work here, and an
  image from elsewhere as its text (the Content Security Policy allows our own images only);
- a table sits in a `table-wrap` box that scrolls sideways on a phone.

The tags a Markdown renderer writes are the one place markup is made in Python: the library's
renderer makes them, the rules below only add an id or the scrolling box.

Each guide is rendered once per process and file, again only when the file's mtime changes.
`headings` and `links` read a Markdown file the same way for the documentation checks
(tests/ops/test_docs.py), so the anchors they check are the ones served here.
"""

import posixpath
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import to_locale
from markdown_it import MarkdownIt
from markdown_it.token import Token

USER_GUIDE = "user-guide"
# The guides served at /help/<name>/ (docs/<name>.md), the user guide at /help/ itself. A name
# not listed here is a 404, whatever is in docs/.
GUIDES = ("user-guide", "operations", "wcs-integration", "development", "architecture", "authority-matrix",
          "glossary-zh-Hans")
IMAGE_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,80}\.png")
SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:")


def docs_dir() -> Path:
    return Path(settings.BASE_DIR) / "docs"


# --- anchors as a Git host makes them ----------------------------------------------------------


def github_slug(text: str) -> str:
    """A heading's anchor as GitHub makes it (github-slugger): lowercase, every character that is
    not a letter, a mark, a digit, '-' or '_' dropped, each space made '-'."""
    kept = (c for c in text.lower() if c in "-_ " or unicodedata.category(c)[0] in "LMN")
    return "".join(kept).replace(" ", "-")


class Slugger:
    """Anchors of one document: a heading whose slug was already taken gets -1, -2, ... as on GitHub."""

    def __init__(self):
        self.seen: dict[str, int] = {}

    def slug(self, text: str) -> str:
        original = slug = github_slug(text)
        while slug in self.seen:
            self.seen[original] += 1
            slug = f"{original}-{self.seen[original]}"
        self.seen[slug] = 0
        return slug


def inline_text(children: list[Token] | None) -> str:
    """The text of an inline run as a reader sees it (code without its backticks, links' words)."""
    parts = []
    for child in children or ():
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return "".join(parts)


# --- reading Markdown --------------------------------------------------------------------------


def parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    md.add_render_rule("table_open", lambda *_: '<div class="table-wrap"><table>\n')
    md.add_render_rule("table_close", lambda *_: "</table></div>\n")
    return md


MARKDOWN = parser()


def _headings(tokens: list[Token]):
    """(heading_open token, text) in document order."""
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            yield token, inline_text(tokens[i + 1].children)


def headings(text: str) -> list[tuple[int, str, str]]:
    """(level, text, anchor) of every heading of a Markdown text, anchors as GitHub makes them."""
    slugger = Slugger()
    return [(int(t.tag[1]), words, slugger.slug(words)) for t, words in _headings(MARKDOWN.parse(text))]


def links(text: str) -> list[str]:
    """Every link and image target of a Markdown text (reference links resolved), in order."""
    targets = []
    for token in MARKDOWN.parse(text):
        for child in token.children or ():
            if child.type == "link_open":
                targets.append(child.attrs.get("href", ""))
            elif child.type == "image":
                targets.append(child.attrs.get("src", ""))
    return targets


# --- rewriting for the console -----------------------------------------------------------------


def guide_url(name: str, anchor: str = "") -> str:
    url = reverse("help") if name == USER_GUIDE else reverse("help-guide", args=[name])
    return f"{url}#{anchor}" if anchor else url


def guide_name(path: str) -> str | None:
    """The served guide a docs-relative path names (`operations.md`, `user-guide.zh-Hans.md`), or None."""
    if "/" in path or not path.endswith(".md"):
        return None
    stem = path[: -len(".md")]
    for name in GUIDES:
        if stem == name or stem.startswith(f"{name}."):
            return name
    return None


def console_target(href: str) -> str | None:
    """Where a guide's link goes in the console: unchanged when it is an anchor or another site's
    page, the served guide or image it names, or None when it names something that is not served."""
    if href.startswith("#") or SCHEME.match(href) or href.startswith("//"):
        return href
    path, _, anchor = href.partition("#")
    if (name := guide_name(posixpath.normpath(path))) is not None:
        return guide_url(name, anchor)
    return image_url(href)


def image_url(src: str) -> str | None:
    """An image of docs/images/ as the console serves it, or None for any other source."""
    directory, _, file = posixpath.normpath(src).rpartition("/")
    return reverse("help-image", args=[file]) if directory == "images" and IMAGE_NAME.fullmatch(file) else None


def _code(content: str) -> Token:
    token = Token("code_inline", "code", 0)
    token.content = content
    return token


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token


def _repo_path(href: str) -> str:
    """A link's target as a path from the repository's root (`../scripts/run` -> `scripts/run`)."""
    return posixpath.normpath(posixpath.join("docs", href.partition("#")[0]))


def _rewrite_inline(children: list[Token]) -> list[Token]:
    out: list[Token] = []
    i = 0
    while i < len(children):
        child = children[i]
        if child.type == "link_open":
            href = child.attrs.get("href", "")
            end = next(j for j in range(i + 1, len(children)) if children[j].type == "link_close")
            target = console_target(href)
            if target is not None:
                child.attrs["href"] = target
                out.extend(children[i : end + 1])
            else:
                inner = children[i + 1 : end]
                words, shown = inline_text(inner), _repo_path(href)
                if words.strip() in (shown, href):
                    out.append(_code(shown))
                else:
                    out.extend([*inner, _text(" ("), _code(shown), _text(")")])
            i = end + 1
            continue
        if child.type == "image":
            target = image_url(child.attrs.get("src", ""))
            if target is None:
                out.append(_text(inline_text(child.children)))
            else:
                child.attrs["src"] = target
                out.append(child)
            i += 1
            continue
        out.append(child)
        i += 1
    return out


@dataclass(frozen=True)
class Guide:
    name: str
    language: str  # the language the guide is written in ("en" or "zh-hans")
    title: str
    html: SafeString


def render(text: str, *, name: str, language: str) -> Guide:
    tokens = MARKDOWN.parse(text)
    slugger = Slugger()
    title = ""
    for token, words in _headings(tokens):
        token.attrs["id"] = slugger.slug(words)
        if not title and token.tag == "h1":
            title = words
    for token in tokens:
        if token.type == "inline" and token.children:
            token.children = _rewrite_inline(token.children)
    # Safe: markdown-it escapes every text, and raw HTML is off.
    html = mark_safe(MARKDOWN.renderer.render(tokens, MARKDOWN.options, {}))
    return Guide(name=name, language=language, title=title or name, html=html)


def guide_file(name: str, language: str) -> tuple[Path, str] | None:
    """The file to show for a served guide in a language, and the language it is written in: the
    language's own (`user-guide.zh-Hans.md`) when there is one, the English one otherwise, None when neither exists."""
    base = docs_dir()
    suffix = to_locale(language).replace("_", "-")  # zh-hans -> zh-Hans
    translated = base / f"{name}.{suffix}.md"
    if language != "en" and translated.is_file():
        return translated, language
    english = base / f"{name}.md"
    return (english, "en") if english.is_file() else None


_rendered: dict[Path, tuple[int, Guide]] = {}


def guide(name: str, language: str) -> Guide | None:
    """A served guide in the reader's language (English when it has no translation), rendered once
    per process and file version; None when the guide is not on this server."""
    found = guide_file(name, language)
    if found is None:
        return None
    path, written_in = found
    mtime = path.stat().st_mtime_ns
    cached = _rendered.get(path)
    if cached is None or cached[0] != mtime:
        cached = (mtime, render(path.read_text(encoding="utf-8"), name=name, language=written_in))
        _rendered[path] = cached
    return cached[1]


def image_file(file: str) -> Path | None:
    """An image of docs/images/ by its file name, only names of the allow-listed pattern."""
    if not IMAGE_NAME.fullmatch(file):
        return None
    path = docs_dir() / "images" / file
    return path if path.is_file() else None
