"""DingTalk (钉钉) custom robot: markdown with `at`, signed when the channel has a secret
(query `timestamp` in ms and `sign`), `errcode` 0 is success, 20 messages a minute (130101: too fast)."""

import base64
import hashlib
import hmac
from urllib.parse import quote_plus

from console.notifications.channels.base import ChatMessage, Request, VendorAnswer, errcode_answer, json_request

LIMITS = ((20, 60),)
TEXT_LIMIT = 20_000
STYLE = "markdown"
TITLE_IN_TEXT = True
RATE_LIMITED = "130101"


def escape(value: str) -> str:
    return value


def sign(secret: str, timestamp_ms: int) -> str:
    """base64 of HMAC-SHA256 keyed by the secret over "timestamp\\nsecret", URL-encoded."""
    digest = hmac.new(secret.encode(), f"{timestamp_ms}\n{secret}".encode(), hashlib.sha256).digest()
    return quote_plus(base64.b64encode(digest).decode())


def request(channel, message: ChatMessage, now: float) -> Request:
    url = channel.url
    if channel.secret:
        timestamp = int(now * 1000)
        url += ("&" if "?" in url else "?") + f"timestamp={timestamp}&sign={sign(channel.secret, timestamp)}"
    text = message.text
    if message.mentions:  # DingTalk shows a mention only when the text names it too
        text += "\n\n" + " ".join(f"@{m}" for m in message.mentions)
    return json_request(url, {"msgtype": "markdown", "markdown": {"title": message.title, "text": text},
                              "at": {"atMobiles": list(message.mentions), "isAtAll": False}})


def answer(status: int, body: bytes) -> VendorAnswer:
    return errcode_answer(status, body, key="errcode", message_key="errmsg")
