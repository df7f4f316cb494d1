"""Feishu / Lark custom bot: an interactive card, signed when the channel has a secret (body
`timestamp` in s and `sign`), `code` 0 is success, 100 messages a minute and 5 a second (11232: too fast)."""

import base64
import hashlib
import hmac

from console.notifications.channels.base import ChatMessage, Request, VendorAnswer, errcode_answer, json_request

LIMITS = ((100, 60), (5, 1))
TEXT_LIMIT = 18_000  # of the card's 20 KB, room left for its frame
STYLE = "markdown"
TITLE_IN_TEXT = False  # the card's header holds it
RATE_LIMITED = "11232"


def escape(value: str) -> str:
    return value


def sign(secret: str, timestamp_s: int) -> str:
    """base64 of HMAC-SHA256 keyed by "timestamp\\nsecret" over an empty message."""
    digest = hmac.new(f"{timestamp_s}\n{secret}".encode(), b"", hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def request(channel, message: ChatMessage, now: float) -> Request:
    text = message.text
    if message.mentions:
        text += "\n\n" + " ".join(f"<at id={m}></at>" for m in message.mentions)
    body = {"msg_type": "interactive", "card": {
        "header": {"title": {"tag": "plain_text", "content": message.title},
                   "template": "red" if message.mentions else "orange"},
        "elements": [{"tag": "div", "text": {"tag": "lark_md", "content": text}}]}}
    if channel.secret:
        timestamp = int(now)
        body = {"timestamp": str(timestamp), "sign": sign(channel.secret, timestamp), **body}
    return json_request(channel.url, body)


def answer(status: int, body: bytes) -> VendorAnswer:
    return errcode_answer(status, body, key="code", message_key="msg")
