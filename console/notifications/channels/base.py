"""What every vendor client shares: the message handed to it, the vendor's answer, the cut.

A client module (wecom.py, dingtalk.py, ...) declares its `LIMITS` (messages per seconds, the
vendor's published robot limits), its `TEXT_LIMIT` (bytes of the message text the vendor takes),
`STYLE` (which link syntax the message template writes), `TITLE_IN_TEXT`, and three functions:
`escape(value)` for WMS text put into its markup, `request(channel, message, now)` returning the
URL, body and headers to POST (signed where the vendor signs), and `answer(status, body)` saying
whether the vendor accepted it: the vendor's success rule, never the HTTP status alone.
"""

import json
from dataclasses import dataclass, field

from recovery.logs.line_breaks import escape_line_breaks

CUT_MARK = "…"


@dataclass(frozen=True)
class ChatMessage:
    title: str  # one line, the notification's subject in the channel's language
    text: str  # the message text in the client's markup, cut to its TEXT_LIMIT
    mentions: tuple[str, ...] = ()  # on an escalation: the channel's `mention`
    payload: dict = field(default_factory=dict)  # the webhook kind's contract fields (§10)


@dataclass(frozen=True)
class Request:
    url: str = field(repr=False)  # may carry the robot's token and the signature
    body: bytes
    headers: dict


@dataclass(frozen=True)
class VendorAnswer:
    ok: bool
    code: str = ""  # the vendor's error code (errcode, code, the HTTP status or Slack's error word)
    message: str = ""  # its error message


def json_request(url: str, body: dict) -> Request:
    return Request(url, json.dumps(body, ensure_ascii=False).encode(), {"Content-Type": "application/json"})


def errcode_answer(status: int, body: bytes, *, key: str, message_key: str) -> VendorAnswer:
    """The rule of WeCom, DingTalk and Feishu: HTTP 200 and `key` 0; anything else refuses,
    with the code and message it gives (HTTP 200 included)."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        data = None
    if not isinstance(data, dict):
        return VendorAnswer(False, str(status), f"HTTP {status}, not a JSON object: {body[:200]!r}")
    code = data.get(key)
    if status == 200 and code == 0 and not isinstance(code, bool):
        return VendorAnswer(True)
    message = data.get(message_key) or data.get("msg") or ""
    return VendorAnswer(False, str(code if code is not None else status), f"HTTP {status}: {message}"[:500])


def one_line(text: str) -> str:
    return escape_line_breaks(text)


def cut(body: str, links: str, limit: int) -> str:
    """`body` then `links`, within `limit` UTF-8 bytes: when too long, whole lines are taken off
    the end of `body` (a mark says so) and the links are always kept."""
    whole = f"{body}\n\n{links}" if links else body
    if len(whole.encode()) <= limit:
        return whole
    tail = f"\n{CUT_MARK}\n\n{links}" if links else f"\n{CUT_MARK}"
    room = limit - len(tail.encode())
    kept: list[str] = []
    used = 0
    for line in body.split("\n"):
        size = len(line.encode()) + (1 if kept else 0)
        if used + size > room:
            if not kept:  # one very long first line: cut inside it, on a character boundary
                kept.append(line.encode()[:max(room, 0)].decode(errors="ignore"))
            break
        kept.append(line)
        used += size
    return "\n".join(kept) + tail
