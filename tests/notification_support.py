"""Real receivers for the notification tests: an SMTP server (aiosmtpd) and an HTTP receiver
(http.server), each on a free port of 127.0.0.1 in a thread. Import the fixtures into a module."""

import json
import socket
import threading
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from aiosmtpd.controller import Controller
from django.utils import timezone

from recovery.models import RecoveryCycle


def free_port() -> int:
    """aiosmtpd cannot take port 0 itself (its start-up self-check connects to it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Mail:
    mail_from: str
    rcpt_tos: list[str]
    message: Message

    @property
    def subject(self) -> str:
        return self.message["Subject"]


@dataclass
class SmtpSink:
    port: int
    messages: list[Mail] = field(default_factory=list)

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 (aiosmtpd's hook name)
        self.messages.append(Mail(envelope.mail_from, list(envelope.rcpt_tos), message_from_bytes(envelope.content)))
        return "250 Message accepted for delivery"


@pytest.fixture
def smtp_server(settings):
    """A real SMTP server; Django's e-mail settings point at it (the SMTP backend, not locmem)."""
    sink = SmtpSink(port=free_port())
    controller = Controller(sink, hostname="127.0.0.1", port=sink.port)
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = sink.port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    yield sink
    controller.stop()


@dataclass
class Received:
    path: str
    headers: dict
    body: bytes

    def json(self):
        return json.loads(self.body)


class WebhookReceiver:
    """An HTTP server that records every POST and answers with `status` (200 by default);
    `on_request`, when set, is called with each request before the answer."""

    def __init__(self, port: int | None = None):
        self.port = port or free_port()
        self.requests: list[Received] = []
        self.status = 200
        self.on_request = None
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                received = Received(self.path, dict(self.headers), self.rfile.read(length))
                receiver.requests.append(received)
                if receiver.on_request is not None:
                    receiver.on_request(received)
                self.send_response(receiver.status)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/tidy"

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def webhook_receiver(settings):
    receiver = WebhookReceiver()
    settings.NOTIFY_WEBHOOK_URL = receiver.url
    yield receiver
    receiver.stop()


@pytest.fixture
def no_channels(settings):
    settings.NOTIFY_EMAIL_TO = []
    settings.NOTIFY_ESCALATE_EMAIL_TO = []
    settings.NOTIFY_WEBHOOK_URL = ""


@pytest.fixture
def notify_db(wms, audit_truncate_allowed, no_channels):
    """The WMS builder on a database whose acknowledgements may be flushed after the test; no
    channel configured unless a test adds one."""
    return wms


def recovery_is_fresh(at=None) -> RecoveryCycle:
    """A successful recovery cycle that just finished, so `recovery_stale` stays closed."""
    at = at or timezone.now()
    return RecoveryCycle.objects.create(started_at=at, finished_at=at, outcome=RecoveryCycle.Outcome.SUCCEEDED)
