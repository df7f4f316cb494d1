"""Stored messages (recovery/messages.py) rendered in the reader's language (docs/architecture.md §15).

`shown(stored, fallback)` is what a page shows: the message made again from its id and values in
the active language, as HTML whose values are escaped and marked `<code translate="no">` (codes
and ids are never translated); a row written before messages were stored, or a message this
version cannot render, shows its stored English text. `plain(...)` is the same as text, for
e-mails, CSV and other places that are not HTML.
"""

from functools import reduce

from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.utils.translation import gettext, pgettext

from recovery.messages import Message


def _separator() -> str:
    # How the language joins sentences of one summary ("; " in English).
    return pgettext("sentence separator", "; ")


def _sentence_joiner(html: bool):
    """How the language puts whole sentences one after the other (a space in English, nothing
    in Chinese), as a template: a translation cannot be empty."""
    template = pgettext("two sentences one after the other", "%(first)s %(then)s")
    template = escape(template) if html else template

    def join(sentences: list[str]) -> str:
        return reduce(lambda first, then: template % {"first": first, "then": then}, sentences) if sentences else ""

    return join


def _as_message(stored) -> Message | None:
    if isinstance(stored, Message):
        return stored
    return Message.from_json(stored)


def _html_value(value) -> str:
    if value is None or value == "":
        return escape(gettext("(none)"))
    text = str(value)
    if text.isdigit():
        return text
    return f'<code translate="no">{escape(text)}</code>'


def plain(stored, fallback: str = "") -> str:
    """The message as text in the active language; `fallback` when it cannot be rendered."""
    msg = _as_message(stored)
    if msg is None:
        return fallback
    try:
        return msg.render(translate=gettext, separator=_separator(),
                          value=lambda v: gettext("(none)") if v is None or v == "" else str(v),
                          join_sentences=_sentence_joiner(html=False))
    except (KeyError, TypeError, ValueError):
        return fallback or msg.english()


def shown(stored, fallback: str = ""):
    """The message as safe HTML in the active language; `fallback` (the stored English, escaped
    when rendered) when it cannot be rendered."""
    msg = _as_message(stored)
    if msg is None:
        return fallback
    try:
        text = msg.render(translate=lambda t: escape(gettext(t)), separator=escape(_separator()),
                          value=_html_value, join_sentences=_sentence_joiner(html=True))
    except (KeyError, TypeError, ValueError):
        return fallback or msg.english()
    return mark_safe(text)  # noqa: S308 (catalogue text escaped, values escaped)
