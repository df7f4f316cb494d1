"""Slack incoming webhook: `text` and a mrkdwn section block, the body `ok` is success, one
message a second."""

from console.notifications.channels.base import ChatMessage, Request, VendorAnswer, json_request

LIMITS = ((1, 1),)
TEXT_LIMIT = 3000  # a section block's text
STYLE = "slack"
TITLE_IN_TEXT = True
RATE_LIMITED = "429"


def escape(value: str) -> str:
    """Slack's three control characters in message text."""
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def request(channel, message: ChatMessage, now: float) -> Request:
    text = message.text
    if message.mentions:
        text += "\n\n" + " ".join(f"<@{m}>" for m in message.mentions)
    return json_request(channel.url, {"text": escape(message.title),
                                      "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": text}}]})


def answer(status: int, body: bytes) -> VendorAnswer:
    text = body.decode(errors="replace").strip()
    if status == 200 and text == "ok":
        return VendorAnswer(True)
    return VendorAnswer(False, text[:64] if status == 200 or (text and len(text) < 64 and " " not in text)
                        else str(status), f"HTTP {status}: {text[:300]}")
