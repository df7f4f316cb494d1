"""Microsoft Teams (a Workflows webhook): an Adaptive Card in a message, any 2xx is success."""

from console.notifications.channels.base import ChatMessage, Request, VendorAnswer, json_request

LIMITS = ()
TEXT_LIMIT = 26_000  # of the 28 KB card, room left for its frame
STYLE = "markdown"
TITLE_IN_TEXT = False  # a bold TextBlock holds it
RATE_LIMITED = "429"


def escape(value: str) -> str:
    return value


def request(channel, message: ChatMessage, now: float) -> Request:
    text = message.text
    if message.mentions:
        text += "\n\n" + " ".join(f"@{m}" for m in message.mentions)
    card = {"$schema": "http://adaptivecards.io/schemas/adaptive-card.json", "type": "AdaptiveCard",
            "version": "1.4", "body": [
                {"type": "TextBlock", "text": message.title, "weight": "Bolder", "size": "Medium", "wrap": True},
                {"type": "TextBlock", "text": text, "wrap": True}]}
    return json_request(channel.url, {"type": "message", "attachments": [
        {"contentType": "application/vnd.microsoft.card.adaptive", "contentUrl": None, "content": card}]})


def answer(status: int, body: bytes) -> VendorAnswer:
    if 200 <= status < 300:
        return VendorAnswer(True)
    return VendorAnswer(False, str(status), f"HTTP {status}: {body[:300].decode(errors='replace')}")
