"""Human texts as message ids with values (docs/architecture.md §15).

A text that is stored (an audit summary, a refusal, a decision's explanation) is kept as a
`Message`: its id is the English sentence with `%(name)s` placeholders, marked where it is
declared with Django's `gettext_noop` so the catalogue collects it, and its values are codes,
ids, numbers or other messages. The English rendering is stored beside it for logs, exports and
tools; a page renders the message again in its reader's language (console/messages.py). So
nothing ever parses stored English back, and `recovery` still never needs gettext at run time.

A value may be a list of messages: it is rendered as those parts joined (`"; "` in English).
`Message.joined(parts)` is a text made only of such parts; `Message.sentences(parts)` one made of
whole sentences, joined as sentences are (`" "` in English, nothing between them in Chinese).
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from django.utils.translation import gettext_noop

# The id of a text that is only its parts, joined: rendered as the parts, never looked up.
JOINED = "%(parts)s"
ENGLISH_SEPARATOR = "; "
# The id of a text that is only whole sentences, one after the other.
SENTENCES = "%(sentences)s"

Translate = Callable[[str], str]


def _identity(text: str) -> str:
    return text


def _english_sentences(sentences: list[str]) -> str:
    return " ".join(sentences)


@dataclass(frozen=True)
class Message:
    id: str
    values: Mapping = field(default_factory=dict)

    @classmethod
    def joined(cls, parts) -> "Message":
        """A text made of `parts` (messages), joined as sentences are."""
        return cls(JOINED, {"parts": list(parts)})

    @classmethod
    def sentences(cls, parts) -> "Message":
        """A text made of `parts`, each a whole sentence, one after the other."""
        return cls(SENTENCES, {"sentences": list(parts)})

    def render(self, *, translate: Translate = _identity, separator: str = ENGLISH_SEPARATOR,
               value: Callable[[object], str] = str,
               join_sentences: Callable[[list[str]], str] = _english_sentences) -> str:
        """The text with its values filled in: `translate` looks the id up (identity: English),
        `value` shows a plain value, `separator` joins a list of messages, `join_sentences` the
        sentences of `Message.sentences`."""
        def again(m):
            return m.render(translate=translate, separator=separator, value=value, join_sentences=join_sentences)

        if self.id == SENTENCES:
            return join_sentences([again(p) if isinstance(p, Message) else value(p)
                                   for p in self.values.get("sentences", ())])

        def shown(v):
            if isinstance(v, Message):
                return again(v)
            if isinstance(v, list | tuple) and all(isinstance(p, Message) for p in v):
                return separator.join(again(p) for p in v)
            return value(v)

        values = {k: shown(v) for k, v in self.values.items()}
        if self.id == JOINED:
            return values.get("parts", "")
        template = translate(self.id)
        # A text with no placeholder is shown as it is (it may hold a literal "%").
        return template % values if values or "%(" in template else template

    def english(self) -> str:
        return self.render()

    def __str__(self) -> str:
        return self.english()

    def as_json(self) -> dict:
        def plain(v):
            if isinstance(v, Message):
                return v.as_json()
            if isinstance(v, list | tuple):
                return [plain(p) for p in v]
            return v

        return {"id": self.id, "values": {k: plain(v) for k, v in self.values.items()}}

    @classmethod
    def from_json(cls, data) -> "Message | None":
        """The message stored by `as_json`, or None for anything else (a row written before
        messages were stored, or a value this version cannot read)."""
        if not isinstance(data, dict) or not isinstance(data.get("id"), str) or not isinstance(
                data.get("values", {}), dict):
            return None

        def value(v):
            if isinstance(v, dict) and "id" in v:
                return cls.from_json(v)
            if isinstance(v, list):
                return [value(p) for p in v]
            return v

        values = {k: value(v) for k, v in data.get("values", {}).items()}
        if any(v is None and data["values"][k] is not None for k, v in values.items()):
            return None
        return cls(data["id"], values)


def message(template: str, **values) -> Message:
    """`Message(template, values)`; `template` is a module constant marked with `gettext_noop`."""
    return Message(template, values)


__all__ = ["JOINED", "SENTENCES", "Message", "gettext_noop", "message"]
