"""NOTIFY_CHANNELS_FILE: the chat channels (docs/architecture.md, design §15), read at start-up.

The file is TOML with one `[[channel]]` table per channel. Everything is checked here, before the
console serves anything: a bad file raises ImproperlyConfigured naming the channel and the field,
so start-up stops. Secrets (the robot URL with its token, the signing secret) may be given inline
or as `url_file` / `secret_file`; they are kept in the `Channel` only, never shown: `host` is what
pages and logs say of a channel. This module reads no Django setting (console/settings.py calls it).
"""

import re
import tomllib
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

KINDS = ("wecom", "dingtalk", "feishu", "slack", "teams", "webhook")
SEVERITIES = ("info", "warning", "error", "critical")
SIGNED_KINDS = ("dingtalk", "feishu")
# The names of the other delivery channels: a chat channel never takes one (metrics' label).
RESERVED_NAMES = ("email", "webhook", "log", "chat")
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
FIELDS = {"name", "kind", "url", "url_file", "secret", "secret_file", "language", "min_severity", "events",
          "escalation_only", "mention"}


@dataclass(frozen=True)
class Channel:
    name: str
    kind: str
    url: str = field(repr=False)  # a secret: the robot's token is in it
    secret: str = field(default="", repr=False)
    language: str = "en"
    min_severity: str = "info"
    events: tuple[str, ...] = ()  # empty: every event
    escalation_only: bool = False
    mention: tuple[str, ...] = ()

    @property
    def host(self) -> str:
        """What pages and logs show of the URL: its host (and port), never its path or token."""
        parts = urlsplit(self.url)
        return parts.hostname + (f":{parts.port}" if parts.port else "") if parts.hostname else ""

    @property
    def shown_url(self) -> str:
        """The URL as the outbound journal records it: scheme and host, the rest elided."""
        return f"{urlsplit(self.url).scheme}://{self.host}/…"

    def takes(self, *, event: str, severity: str, escalated: bool) -> bool:
        """Whether a message of this event and severity (an escalation or not) goes to this channel."""
        if self.escalation_only and not escalated:
            return False
        if self.events and event not in self.events:
            return False
        return SEVERITIES.index(severity) >= SEVERITIES.index(self.min_severity) if severity in SEVERITIES else True


class ChannelFileError(ImproperlyConfigured):
    pass


def _fail(path: str, where: str, field_name: str, problem: str):
    raise ChannelFileError(f"NOTIFY_CHANNELS_FILE {path}: {where}, field {field_name!r}: {problem}")


def _read_secret_file(path: str, where: str, field_name: str, name: str) -> str:
    try:
        with open(name, encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError as exc:
        _fail(path, where, field_name, f"cannot read {name!r}: {exc.strerror}")


def _text(path, where, entry, key, *, required=False) -> str:
    value = entry.get(key, "")
    if not isinstance(value, str):
        _fail(path, where, key, f"must be a string, got {type(value).__name__}")
    if required and not value.strip():
        _fail(path, where, key, "is required")
    return value.strip()


def _words(path, where, entry, key) -> tuple[str, ...]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        _fail(path, where, key, "must be a list of non-empty strings")
    return tuple(v.strip() for v in value)


def _secret(path, where, entry, key) -> str:
    inline, from_file = _text(path, where, entry, key), _text(path, where, entry, f"{key}_file")
    if inline and from_file:
        _fail(path, where, key, f"give {key} or {key}_file, not both")
    return _read_secret_file(path, where, f"{key}_file", from_file) if from_file else inline


def _channel(path: str, index: int, entry, *, languages: dict[str, str], default_language: str,
             events: tuple[str, ...] | None) -> Channel:
    where = f"channel {index + 1}"
    if not isinstance(entry, dict):
        _fail(path, where, "channel", "must be a table ([[channel]])")
    name = _text(path, where, entry, "name", required=True)
    if not NAME_PATTERN.match(name) or name in RESERVED_NAMES:
        _fail(path, where, "name", f"{name!r} must be lower-case letters, digits, '.', '_' or '-' (at most 64), "
                                   f"and none of {', '.join(RESERVED_NAMES)}")
    where = f"channel {name!r}"
    unknown = sorted(set(entry) - FIELDS)
    if unknown:
        _fail(path, where, unknown[0], f"is not a channel field (known: {', '.join(sorted(FIELDS))})")
    kind = _text(path, where, entry, "kind", required=True)
    if kind not in KINDS:
        _fail(path, where, "kind", f"must be one of {', '.join(KINDS)}, got {kind!r}")
    url = _secret(path, where, entry, "url")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in url):
        _fail(path, where, "url" if "url_file" not in entry else "url_file",
              "must be an http:// or https:// URL with a host")
    secret = _secret(path, where, entry, "secret")
    if secret and kind not in SIGNED_KINDS:
        _fail(path, where, "secret", f"only {' and '.join(SIGNED_KINDS)} sign their messages")
    language = _text(path, where, entry, "language") or default_language
    if language.lower() not in languages:
        _fail(path, where, "language", f"must be one of {', '.join(languages.values())}, got {language!r}")
    min_severity = _text(path, where, entry, "min_severity") or "info"
    if min_severity not in SEVERITIES:
        _fail(path, where, "min_severity", f"must be one of {', '.join(SEVERITIES)}, got {min_severity!r}")
    chosen = _words(path, where, entry, "events")
    for event in chosen:
        if events is not None and event not in events:
            _fail(path, where, "events", f"{event!r} is not an event (known: {', '.join(events)})")
    escalation_only = entry.get("escalation_only", False)
    if not isinstance(escalation_only, bool):
        _fail(path, where, "escalation_only", "must be true or false")
    return Channel(name=name, kind=kind, url=url, secret=secret, language=languages[language.lower()],
                   min_severity=min_severity, events=chosen, escalation_only=escalation_only,
                   mention=_words(path, where, entry, "mention"))


def parse_channels(text: str, *, path: str = "<text>", languages: list[str], default_language: str,
                   events: tuple[str, ...] | None = None) -> tuple[Channel, ...]:
    """The channels of a NOTIFY_CHANNELS_FILE's text; ChannelFileError naming the channel and field.
    `events`: the event codes a channel may name (None: checked later, by the system check
    console.E140, which knows the registry)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ChannelFileError(f"NOTIFY_CHANNELS_FILE {path}: not valid TOML: {exc}") from None
    unknown = sorted(set(data) - {"channel"})
    if unknown:
        raise ChannelFileError(f"NOTIFY_CHANNELS_FILE {path}: unknown table {unknown[0]!r} (only [[channel]])")
    entries = data.get("channel", [])
    if not isinstance(entries, list):
        raise ChannelFileError(f"NOTIFY_CHANNELS_FILE {path}: 'channel' must be an array of tables ([[channel]])")
    codes = {code.lower(): code for code in languages}
    channels = tuple(_channel(path, i, e, languages=codes, default_language=default_language, events=events)
                     for i, e in enumerate(entries))
    seen = set()
    for channel in channels:
        if channel.name in seen:
            _fail(path, f"channel {channel.name!r}", "name", "is used by two channels")
        seen.add(channel.name)
    return channels


def load_channels(path: str, *, languages: list[str], default_language: str,
                  events: tuple[str, ...] | None = None) -> tuple[Channel, ...]:
    """The channels of the file at `path` (none when `path` is empty)."""
    if not path:
        return ()
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ChannelFileError(f"NOTIFY_CHANNELS_FILE: cannot read {path!r}: {exc}") from None
    return parse_channels(text, path=path, languages=languages, default_language=default_language, events=events)
