"""WeCom (企业微信) group robot: markdown, `errcode` 0 is success, 20 messages a minute."""

from console.notifications.channels.base import ChatMessage, Request, VendorAnswer, errcode_answer, json_request

LIMITS = ((20, 60),)
TEXT_LIMIT = 4096  # bytes of markdown.content
STYLE = "markdown"
TITLE_IN_TEXT = True
RATE_LIMITED = "45009"


def escape(value: str) -> str:
    return value


def request(channel, message: ChatMessage, now: float) -> Request:
    markdown = {"content": message.text}
    if message.mentions:
        markdown["mentioned_mobile_list"] = list(message.mentions)
    return json_request(channel.url, {"msgtype": "markdown", "markdown": markdown})


def answer(status: int, body: bytes) -> VendorAnswer:
    return errcode_answer(status, body, key="errcode", message_key="errmsg")
