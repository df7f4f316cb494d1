"""The notification tables (console/models/__init__.py imports them, so they belong to the console app).

Notification: one row per incident; at most one unresolved row per dedup_key (a partial unique
index). NotificationAcknowledgement: who acknowledged which notification and when, append-only
in PostgreSQL itself (migration console 0003). NotificationDelivery: the outbox, one row per
channel and message (the opening message, the escalation), with NotificationDeliveryAttempt
recording every try. NotificationThreshold: the paused-too-long threshold per pause reason
code, edited by shift leads. Silence: a planned quiet period for matching notifications, and
SilenceEnding: who ended one early; both append-only in PostgreSQL itself (migration console
0012), so their history is their rows.
"""

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex, OpClass
from django.db import models
from django.db.models import Q
from django.db.models.fields.json import KeyTransform
from django.utils.translation import gettext_lazy as _


class Severity(models.TextChoices):
    """Ordered: an escalation always raises a notification to CRITICAL."""

    WARNING = "warning", _("warning")
    ERROR = "error", _("error")
    CRITICAL = "critical", _("critical")


class Notification(models.Model):
    class State(models.TextChoices):
        OPEN = "open", _("open")
        ACKNOWLEDGED = "acknowledged", _("acknowledged")
        RESOLVED = "resolved", _("resolved")

    event = models.CharField(max_length=32, help_text="an event code of console/notifications/events.py")
    dedup_key = models.CharField(max_length=200)
    state = models.CharField(max_length=16, choices=State.choices, default=State.OPEN)
    severity = models.CharField(max_length=16, choices=Severity.choices, default=Severity.WARNING)
    subject = models.CharField(max_length=300)
    body = models.TextField(blank=True)
    workflow_id = models.BigIntegerField(null=True, blank=True)
    reason = models.CharField(max_length=200, blank=True, help_text="pause reason code, or what the cause is")
    url_path = models.CharField(max_length=200, help_text="the console page that shows the cause")
    cause_since = models.DateTimeField(null=True, blank=True, help_text="when the cause began (for its age)")
    details = models.JSONField(default=dict)
    opened_at = models.DateTimeField()
    last_seen_at = models.DateTimeField(help_text="the last evaluation that still saw the cause")
    evaluations = models.IntegerField(default=1, help_text="evaluations that saw the cause")
    escalated_at = models.DateTimeField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    aisle = models.CharField(max_length=64, blank=True, help_text="a group's aisle (SPACE_CODE_PATTERN), else empty")
    silenced_by = models.ForeignKey("Silence", on_delete=models.PROTECT, null=True, blank=True, related_name="+",
                                    help_text="the silence holding its messages back now (or when it resolved)")
    announced_at = models.DateTimeField(null=True, blank=True,
                                        help_text="when its messages were released: at opening, or when its "
                                                  "silence ended; escalation counts from here")

    class Meta:
        ordering = ["-opened_at", "-id"]
        constraints = [
            # One unresolved (open or acknowledged) notification per dedup key: a repeat of the
            # cause updates it; only after it resolves can the key open again.
            models.UniqueConstraint(fields=["dedup_key"], condition=Q(resolved_at__isnull=True),
                                    name="notification_one_unresolved_per_dedup_key"),
        ]
        indexes = [
            models.Index(fields=["state", "-opened_at"], name="notification_state_idx"),
            models.Index(fields=["event", "-opened_at"], name="notification_event_idx"),
            # The list's capped per-state counts of one event: at most STATE_COUNT_CAP + 1 entries
            # of (event, state) read, however long the history.
            models.Index(fields=["event", "state"], name="notification_event_state_idx"),
            # The analytics windows and their spaces: the notifications opened since a time.
            models.Index(fields=["opened_at"], name="notification_opened_idx"),
            # The case file: a workflow's own notifications, and a group's whose members include it
            # (details.workflow_ids @> '[id]'), ORed in one bitmap.
            models.Index(fields=["workflow_id", "opened_at"], name="notification_workflow_idx"),
            GinIndex(OpClass(KeyTransform("workflow_ids", "details"), name="jsonb_path_ops"),
                     name="notification_members_idx"),
        ]

    def __str__(self):
        return f"{self.event} {self.dedup_key} ({self.state})"

    @property
    def silenced(self) -> bool:
        """Held back by a silence: recorded and listed, neither sent nor escalated."""
        return self.silenced_by_id is not None


class NotificationAcknowledgement(models.Model):
    """Who acknowledged a notification and when. Never updated, never deleted."""

    notification = models.OneToOneField(Notification, on_delete=models.PROTECT, related_name="acknowledgement")
    at = models.DateTimeField(auto_now_add=True, db_index=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    username = models.CharField(max_length=150, help_text="as signed in at the time")

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self):
        return f"notification {self.notification_id} acknowledged by {self.username}"


class NotificationDelivery(models.Model):
    """One message on one channel: written with its notification (or escalation), sent later."""

    class Channel(models.TextChoices):
        EMAIL = "email", _("e-mail")
        WEBHOOK = "webhook", _("webhook")
        LOG = "log", _("log")
        CHAT = "chat", _("chat channel")  # one of NOTIFY_CHANNELS_FILE's, named by `channel_name`

    class Kind(models.TextChoices):
        OPENED = "opened", _("opened")
        ESCALATED = "escalated", _("escalated")

    class State(models.TextChoices):
        PENDING = "pending", _("pending")
        SENT = "sent", _("sent")
        # Its notification resolved or was acknowledged while silenced: never sent.
        WITHHELD = "withheld", _("withheld")

    notification = models.ForeignKey(Notification, on_delete=models.PROTECT, related_name="deliveries")
    channel = models.CharField(max_length=16, choices=Channel.choices)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.OPENED)
    severity = models.CharField(max_length=16, choices=Severity.choices)
    recipients = models.JSONField(default=list, help_text="e-mail addresses, or the webhook URL")
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    created_at = models.DateTimeField(auto_now_add=True)
    attempts = models.IntegerField(default=0)
    next_attempt_at = models.DateTimeField(help_text="not tried again before this time")
    last_error = models.TextField(blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    channel_name = models.CharField(max_length=64, blank=True, default="",
                                    help_text="the chat channel's name (NOTIFY_CHANNELS_FILE)")

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["next_attempt_at"], condition=Q(state="pending"),
                                name="notification_delivery_due_idx")]

    def __str__(self):
        return f"{self.kind} {self.channel} delivery of notification {self.notification_id} ({self.state})"


class NotificationDeliveryAttempt(models.Model):
    delivery = models.ForeignKey(NotificationDelivery, on_delete=models.PROTECT, related_name="attempt_rows")
    at = models.DateTimeField()
    ok = models.BooleanField()
    error = models.TextField(blank=True)
    duration_ms = models.FloatField()
    vendor_code = models.CharField(max_length=64, blank=True, default="",
                                   help_text="a chat vendor's error code (errcode, code, HTTP status)")

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return f"attempt at {self.at:%Y-%m-%d %H:%M:%S}: {'sent' if self.ok else self.error}"


class NotificationThreshold(models.Model):
    """Minutes a workflow may stay paused with a reason code before `paused_too_long` opens."""

    reason_code = models.CharField(max_length=64, unique=True)
    paused_too_long_minutes = models.PositiveIntegerField()
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True,
                                   related_name="+")

    class Meta:
        ordering = ["reason_code"]

    def __str__(self):
        return f"{self.reason_code}: {self.paused_too_long_minutes} min"


class Silence(models.Model):
    """A planned quiet period (a shuttle down for maintenance): notifications matching `event`,
    `reason` and `aisle` (each blank = any) between `starts_at` and `ends_at` are recorded and
    listed but neither delivered nor escalated. Never updated, never deleted; ending one early is
    a SilenceEnding row."""

    event = models.CharField(max_length=32, blank=True)
    reason = models.CharField(max_length=200, blank=True)
    aisle = models.CharField(max_length=64, blank=True)
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()
    comment = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    username = models.CharField(max_length=150, help_text="as signed in at the time")

    class Meta:
        ordering = ["-starts_at", "-id"]
        indexes = [models.Index(fields=["ends_at"], name="silence_ends_idx")]
        constraints = [models.CheckConstraint(condition=Q(ends_at__gt=models.F("starts_at")),
                                              name="silence_ends_after_it_starts")]

    def __str__(self):
        return f"silence {self.pk} {self.event or '*'}:{self.reason or '*'}:{self.aisle or '*'}"

    def matches(self, *, event: str, reason: str, aisle: str) -> bool:
        return ((not self.event or self.event == event) and (not self.reason or self.reason == reason)
                and (not self.aisle or self.aisle == aisle))


class SilenceEnding(models.Model):
    """Who ended a silence before its `ends_at`, and when. Never updated, never deleted."""

    silence = models.OneToOneField(Silence, on_delete=models.PROTECT, related_name="ending")
    at = models.DateTimeField()
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    username = models.CharField(max_length=150, help_text="as signed in at the time")

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self):
        return f"silence {self.silence_id} ended by {self.username}"


class ChannelState(models.Model):
    """One row per chat channel (NOTIFY_CHANNELS_FILE's `name`): its last success and failure, and
    the row every sender locks (FOR UPDATE) while it decides whether the channel's rate limit
    lets one more message out, and sends it: several qcluster processes send one at a time, in order."""

    name = models.CharField(max_length=64, unique=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    last_failure_at = models.DateTimeField(null=True, blank=True)
    last_failure_code = models.CharField(max_length=64, blank=True)
    last_failure_error = models.TextField(blank=True)

    def __str__(self):
        return f"chat channel {self.name}"


class ChannelSend(models.Model):
    """A message let out to a chat channel, at its time: what the rate limits count (the last
    vendor minute's rows; older ones are deleted by the sender)."""

    channel = models.CharField(max_length=64)
    at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["channel", "at"], name="channel_send_recent_idx")]

    def __str__(self):
        return f"message to {self.channel} at {self.at:%Y-%m-%d %H:%M:%S}"


class ChannelTestMessage(models.Model):
    """A shift lead's "send a test message" (the audit of who asked, when, for which channel) and
    its outcome: sent once by the delivery worker, never retried."""

    class State(models.TextChoices):
        PENDING = "pending", _("waiting")
        SENT = "sent", _("sent")
        FAILED = "failed", _("failed")

    channel = models.CharField(max_length=64)
    requested_at = models.DateTimeField()
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    username = models.CharField(max_length=150, help_text="as signed in at the time")
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    next_attempt_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    vendor_code = models.CharField(max_length=64, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-requested_at", "-id"]
        indexes = [models.Index(fields=["next_attempt_at"], condition=Q(state="pending"),
                                name="channel_test_due_idx"),
                   models.Index(fields=["requested_by", "requested_at"], name="channel_test_by_user_idx"),
                   models.Index(fields=["channel", "-requested_at"], name="channel_test_latest_idx")]

    def __str__(self):
        return f"test message to {self.channel} by {self.username} ({self.state})"
