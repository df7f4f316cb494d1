"""Local HTTP servers that behave like the chat vendors' robots (design §15), for the channel tests.

Each `ChatReceiver` serves one robot of one vendor on a free port of 127.0.0.1, in a thread. It
answers as the vendor does: it checks the token in the URL, the body's shape, the size limit and,
for DingTalk and Feishu with a secret, the signature (stack-notes: DingTalk `timestamp` in ms and
`sign` in the query, Feishu `timestamp` in s and `sign` in the body); it refuses with HTTP 200 and
a non-zero `errcode` / `code` (Slack: its HTTP status and error word), and past its rate limit
(by its own clock, over a sliding window) it answers the vendor's rate-limit code. What it
accepts is in `accepted` (arrival time and decoded body), what it refuses in `refused`.
"""

import base64
import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from tests.notification_support import free_port

PATHS = {"wecom": "/cgi-bin/webhook/send?key={token}", "dingtalk": "/robot/send?access_token={token}",
         "feishu": "/open-apis/bot/v2/hook/{token}", "slack": "/services/T0001/B0001/{token}",
         "teams": "/workflows/{token}/triggers/manual/paths/invoke?sig=s3cret-{token}",
         "webhook": "/hooks/{token}"}
# The vendor's rate-limit answer and its published limit (messages, seconds).
RATE = {"wecom": (20, 60), "dingtalk": (20, 60), "feishu": (100, 60), "slack": (1, 1), "teams": None,
        "webhook": None}


@dataclass
class Delivered:
    at: float
    path: str
    body: dict


class Refusal(Exception):
    def __init__(self, status: int, answer):
        self.status, self.answer = status, answer


class ChatReceiver:
    def __init__(self, kind: str, *, token: str = "robot-token-1", secret: str = "", limit: tuple | None = None,
                 window_seconds: float | None = None):
        self.kind, self.token, self.secret = kind, token, secret
        count_seconds = RATE[kind] if limit is None else limit
        self.limit = None if count_seconds is None else (count_seconds[0], window_seconds or count_seconds[1])
        self.port = free_port()
        self.accepted: list[Delivered] = []
        self.refused: list[tuple[int, object]] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                status, answer = receiver.handle(self.path, raw)
                data = answer.encode() if isinstance(answer, str) else json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/plain" if isinstance(answer, str) else "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}" + PATHS[self.kind].format(token=self.token)

    def url_with(self, token: str) -> str:
        return f"http://127.0.0.1:{self.port}" + PATHS[self.kind].format(token=token)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    # --- the vendor's rules ------------------------------------------------------------------

    def refuse(self, code: int, message: str):
        key = "code" if self.kind == "feishu" else "errcode"
        other = "msg" if self.kind == "feishu" else "errmsg"
        if self.kind == "slack":
            raise Refusal(code, message)
        if self.kind in ("teams", "webhook"):
            raise Refusal(code, {"error": {"code": "InvalidRequest", "message": message}})
        raise Refusal(200, {key: code, other: message})

    def handle(self, path: str, raw: bytes):
        now = time.time()
        try:
            body = self.check(path, raw, now)
        except Refusal as refusal:
            with self.lock:
                self.refused.append((refusal.status, refusal.answer))
            return refusal.status, refusal.answer
        with self.lock:
            if self.limit is not None:
                count, window = self.limit
                recent = [d for d in self.accepted if d.at > now - window]
                if len(recent) >= count:
                    answer = {"wecom": (200, {"errcode": 45009, "errmsg": "api freq out of limit"}),
                              "dingtalk": (200, {"errcode": 130101, "errmsg": "send too fast"}),
                              "feishu": (200, {"code": 11232, "msg": "frequency limited"}),
                              "slack": (429, "rate_limited")}[self.kind]
                    self.refused.append(answer)
                    return answer
            self.accepted.append(Delivered(now, path, body))
        if self.kind == "slack":
            return 200, "ok"
        if self.kind == "teams":
            return 202, ""
        if self.kind == "webhook":
            return 200, {"received": True}
        if self.kind == "feishu":
            return 200, {"code": 0, "msg": "success", "data": {}}
        return 200, {"errcode": 0, "errmsg": "ok"}

    def check(self, path: str, raw: bytes, now: float) -> dict:
        parts = urlsplit(path)
        query = parse_qs(parts.query)
        expected = urlsplit(PATHS[self.kind].format(token=self.token))
        if self.kind == "wecom" and query.get("key") != [self.token]:
            self.refuse(93000, "invalid webhook url, hint: key not found")
        if self.kind == "dingtalk" and query.get("access_token") != [self.token]:
            self.refuse(300001, "token is not exist")
        if self.kind in ("feishu", "slack", "teams", "webhook") and parts.path != expected.path:
            self.refuse({"feishu": 19001, "slack": 404, "teams": 404, "webhook": 404}[self.kind],
                        {"feishu": "param invalid: incoming webhook access token invalid", "slack": "no_service",
                         "teams": "workflow not found", "webhook": "not found"}[self.kind])
        try:
            body = json.loads(raw)
        except ValueError:
            self.refuse({"wecom": 40008, "dingtalk": 43004, "feishu": 9499, "slack": 400, "teams": 400,
                         "webhook": 400}[self.kind],
                        "invalid_payload")
        getattr(self, f"check_{self.kind}")(body, query, now)
        return body

    def check_wecom(self, body, query, now):
        content = (body.get("markdown") or {}).get("content") if body.get("msgtype") == "markdown" else None
        if not isinstance(content, str) or not content:
            self.refuse(40008, "invalid message type")
        if len(content.encode()) > 4096:
            self.refuse(40058, "markdown.content exceed max length 4096")

    def check_dingtalk(self, body, query, now):
        if self.secret:
            timestamp, sign = query.get("timestamp", [""])[0], query.get("sign", [""])[0]
            if not timestamp.isdigit() or abs(now * 1000 - int(timestamp)) > 3_600_000:
                self.refuse(310000, "sign not match, more: [timestamp out of range]")
            digest = hmac.new(self.secret.encode(), f"{timestamp}\n{self.secret}".encode(), hashlib.sha256).digest()
            if sign != base64.b64encode(digest).decode():  # (the query string decoded once)
                self.refuse(310000, "sign not match, more: [sign not match]")
        markdown = body.get("markdown") or {}
        if body.get("msgtype") != "markdown" or not markdown.get("title") or not markdown.get("text"):
            self.refuse(40035, "missing parameter markdown")
        if len(markdown["text"].encode()) > 20_000:
            self.refuse(460101, "message too long, exceed 20000 bytes")
        at = body.get("at") or {}
        if not isinstance(at.get("atMobiles", []), list):
            self.refuse(40035, "at.atMobiles must be a list")

    def check_feishu(self, body, query, now):
        if self.secret:
            timestamp, sign = str(body.get("timestamp", "")), body.get("sign", "")
            if not timestamp.isdigit() or abs(now - int(timestamp)) > 3600:
                self.refuse(19021, "sign match fail or timestamp is not within one hour from current time")
            digest = hmac.new(f"{timestamp}\n{self.secret}".encode(), b"", hashlib.sha256).digest()
            if sign != base64.b64encode(digest).decode():
                self.refuse(19021, "sign match fail or timestamp is not within one hour from current time")
        card = body.get("card") if body.get("msg_type") == "interactive" else None
        if not isinstance(card, dict) or not card.get("elements"):
            self.refuse(9499, "Bad Request: card is required")
        if len(json.dumps(body, ensure_ascii=False).encode()) > 20 * 1024:
            self.refuse(9499, "request body is too large, limit 20 KB")

    def check_slack(self, body, query, now):
        if not isinstance(body.get("text"), str) or not body["text"]:
            self.refuse(400, "no_text")
        for block in body.get("blocks", []):
            if len(block.get("text", {}).get("text", "")) > 3000:
                self.refuse(400, "invalid_blocks")

    def check_teams(self, body, query, now):
        attachments = body.get("attachments") if body.get("type") == "message" else None
        if not attachments or attachments[0].get("contentType") != "application/vnd.microsoft.card.adaptive":
            self.refuse(400, "the body is not a message with an Adaptive Card")
        if len(json.dumps(body).encode()) > 28 * 1024:
            self.refuse(413, "the message is larger than 28 KB")

    def check_webhook(self, body, query, now):
        if not isinstance(body.get("event"), str) or not isinstance(body.get("dedup_key"), str):
            self.refuse(400, "event and dedup_key are required")

    # --- what tests read ---------------------------------------------------------------------

    def texts(self) -> list[str]:
        """The text of each accepted message, as the group sees it."""
        return [text_of(self.kind, d.body) for d in self.accepted]


def text_of(kind: str, b: dict) -> str:
    if kind == "wecom":
        return b["markdown"]["content"]
    if kind == "dingtalk":
        return b["markdown"]["text"]
    if kind == "feishu":
        return b["card"]["header"]["title"]["content"] + "\n" + b["card"]["elements"][0]["text"]["content"]
    if kind == "slack":
        return b["blocks"][0]["text"]["text"]
    return "\n".join(t["text"] for t in b["attachments"][0]["content"]["body"])


def configure_channels(settings, tmp_path, toml: str, name: str = "channels.toml"):
    """Write a NOTIFY_CHANNELS_FILE and load it as start-up does; the channels, as settings hold them."""
    from console.notifications.channels.config import load_channels

    path = tmp_path / name
    path.write_text(toml, encoding="utf-8")
    settings.NOTIFY_CHANNELS_FILE = str(path)
    settings.NOTIFY_CHANNELS = load_channels(str(path), languages=[c for c, _ in settings.LANGUAGES],
                                             default_language=settings.LANGUAGE_CODE)
    return settings.NOTIFY_CHANNELS
