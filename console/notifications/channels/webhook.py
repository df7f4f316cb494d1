"""The generic webhook as a channel: the JSON fields of the NOTIFY_WEBHOOK_URL contract (§10),
its subject in the channel's language; any 2xx is success."""

import json

from console.notifications.channels.base import ChatMessage, Request, VendorAnswer

LIMITS = ()
TEXT_LIMIT = 20_000
STYLE = "markdown"
TITLE_IN_TEXT = True
RATE_LIMITED = "429"


def escape(value: str) -> str:
    return value


def request(channel, message: ChatMessage, now: float) -> Request:
    return Request(channel.url, json.dumps(message.payload).encode(), {"Content-Type": "application/json"})


def answer(status: int, body: bytes) -> VendorAnswer:
    if 200 <= status < 300:
        return VendorAnswer(True)
    return VendorAnswer(False, str(status), f"HTTP {status}")
