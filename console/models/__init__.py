"""The console's own tables: the repair audit trail, cancel proposals (four eyes), batches, workflow
notes, role changes, languages; the notification tables are in console/models/notifications.py.
The bottom of the console's layers (docs/architecture.md §2): models import nothing of the console.

RepairAudit is append-only in the database itself: migration 0002 installs a trigger that
refuses UPDATE and DELETE of any row, and TRUNCATE of a non-empty table. Refused
attempts are rows too. Proposals and batches are ordinary mutable rows; every state change of
a proposal also writes an audit row, so its history comes from the audit, not from the row.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from console.models.notifications import (  # noqa: F401  (the notification tables belong to this app)
    ChannelSend,
    ChannelState,
    ChannelTestMessage,
    Notification,
    NotificationAcknowledgement,
    NotificationDelivery,
    NotificationDeliveryAttempt,
    NotificationThreshold,
    Severity,
    Silence,
    SilenceEnding,
)


class RepairBatch(models.Model):
    """One batch re-check: a reason given once, one audit row per workflow linked back here."""

    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    reason_code = models.CharField(max_length=64)
    reason_text = models.TextField()
    idempotency_key = models.CharField(max_length=64, unique=True)
    selection = models.JSONField(help_text="the filters or ids the batch was chosen by")
    workflow_count = models.IntegerField(default=0)
    previewed = models.JSONField(default=dict, blank=True,
                                 help_text="workflow id -> the evidence fingerprint shown when the batch was chosen")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"batch re-check {self.pk} ({self.workflow_count} workflows)"


class CancelProposal(models.Model):
    """Cancel-and-release, proposed by one shift lead and applied when another approves."""

    class Status(models.TextChoices):
        PENDING = "PENDING"
        APPLIED = "APPLIED"
        REJECTED = "REJECTED"
        STALE = "STALE"  # the evidence changed after the proposal: it can no longer be approved

    workflow_id = models.BigIntegerField(db_index=True)
    proposed_at = models.DateTimeField(auto_now_add=True)
    proposed_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    reason_code = models.CharField(max_length=64)
    reason_text = models.TextField()
    fingerprint = models.CharField(max_length=64, help_text="the evidence fingerprint the proposer previewed")
    evidence = models.JSONField()
    idempotency_key = models.CharField(max_length=64, unique=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True,
                                   related_name="+")
    # The floor confirmation a cancel needs while a vehicle may be moving the tray (job status 2
    # or 3): the tray code and the space where it stands, scanned or typed by the proposer. NULL
    # says "none was needed" (existing rows too); an empty scan is refused, never stored.
    floor_tray_code = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001
    floor_space_code = models.CharField(max_length=200, null=True, blank=True)  # noqa: DJ001

    class Meta:
        ordering = ["-proposed_at"]
        constraints = [
            # At most one open proposal per workflow.
            models.UniqueConstraint(fields=["workflow_id"], condition=Q(status="PENDING"),
                                    name="cancel_proposal_one_pending_per_workflow"),
        ]

    def __str__(self):
        return f"cancel proposal {self.pk} for workflow {self.workflow_id} ({self.status})"


class RepairAudit(models.Model):
    """One row per repair attempt, applied or refused. Never updated, never deleted."""

    class Stage(models.TextChoices):
        PREVIEW = "PREVIEW"
        APPLY = "APPLY"

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True,
                             related_name="+")
    username = models.CharField(max_length=150, help_text="as signed in at the time")
    # The action's code (console.repair.registry declares them, with their labels): no choices
    # here, so a new action needs no migration.
    action = models.CharField(max_length=32)
    stage = models.CharField(max_length=16, choices=Stage.choices, default=Stage.APPLY)
    workflow_id = models.BigIntegerField(null=True, blank=True)
    step_id = models.BigIntegerField(null=True, blank=True)
    pause_reason = models.CharField(max_length=64, blank=True, help_text="the workflow's pause reason before")
    reason_code = models.CharField(max_length=64, blank=True)
    reason_text = models.TextField(blank=True)
    inputs = models.JSONField(default=dict, help_text="what the operator typed or scanned")
    fingerprint_previewed = models.CharField(max_length=64, blank=True)
    fingerprint_before = models.CharField(max_length=64, blank=True)
    fingerprint_after = models.CharField(max_length=64, blank=True)
    evidence_before = models.JSONField(null=True, blank=True)
    evidence_after = models.JSONField(null=True, blank=True)
    changes = models.JSONField(default=list, help_text="every row changed: table, key, before, after")
    outcome = models.CharField(max_length=64, help_text="APPLIED, PROPOSED, REJECTED or REFUSED:<why>")
    # The English of the message and of what the table says afterwards, for logs, CSV and tools;
    # beside each, the same text as a message id with values (recovery.messages.Message as JSON,
    # docs/architecture.md §15) that pages render in the reader's language. NULL: a row written
    # before messages were stored, which shows its English.
    message = models.TextField(blank=True)
    message_json = models.JSONField(null=True, blank=True, help_text="the message as a message id with values")
    decision_after = models.CharField(max_length=200, blank=True,
                                      help_text="what the decision table says after the attempt")
    decision_after_json = models.JSONField(null=True, blank=True,
                                           help_text="decision_after as a message id with values")
    consistent_after = models.BooleanField(default=False,
                                           help_text="not paused, and the table would not pause it")
    idempotency_key = models.CharField(max_length=64, unique=True, null=True, blank=True)
    proposal = models.ForeignKey(CancelProposal, on_delete=models.PROTECT, null=True, blank=True,
                                 related_name="audit")
    batch = models.ForeignKey(RepairBatch, on_delete=models.PROTECT, null=True, blank=True, related_name="audit")
    duration_ms = models.IntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["workflow_id", "-id"]),
            models.Index(fields=["username", "-id"]),
            models.Index(fields=["action", "-id"]),
        ]

    def __str__(self):
        return f"{self.action} {self.outcome} on workflow {self.workflow_id} by {self.username}"

    @property
    def applied(self) -> bool:
        return not self.outcome.startswith("REFUSED")

    @property
    def refusal(self) -> str:
        return self.outcome.split(":", 1)[1] if self.outcome.startswith("REFUSED:") else ""


class WorkflowNote(models.Model):
    """What someone on the floor saw about a workflow ("vehicle 3 fault, maintenance called").

    Append-only in the database itself like RepairAudit (migration 0003 installs the trigger):
    a note is never edited or deleted; a correction is a new note."""

    TEXT_MAX_LENGTH = 2000

    workflow_id = models.BigIntegerField()
    at = models.DateTimeField(auto_now_add=True, db_index=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True,
                             related_name="+")
    username = models.CharField(max_length=150, help_text="as signed in at the time")
    text = models.TextField()

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["workflow_id", "-at"], name="workflow_note_wf_idx"),
                   # One person's notes of the last hour: the note rate limit (console/notes/services.py).
                   models.Index(fields=["user", "at"], name="workflow_note_user_at_idx")]

    def __str__(self):
        return f"note {self.pk} on workflow {self.workflow_id} by {self.username}"


class RoleChangeAudit(models.Model):
    """One row per change of a user's roles: its groups (console roles) or its superuser, staff
    and active flags; who changed whose roles, when, and both before and after. Append-only in
    the database like RepairAudit (migration 0003). No foreign keys: the record outlives the
    accounts it names."""

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    changed_by = models.CharField(max_length=150, blank=True,
                                  help_text="who made the change; empty outside a signed-in request (shell, command)")
    user_id = models.BigIntegerField(help_text="the account whose groups changed")
    username = models.CharField(max_length=150)
    before = models.JSONField(default=list, help_text="group names before, sorted")
    after = models.JSONField(default=list, help_text="group names after, sorted")
    # {"is_superuser": ..., "is_staff": ..., "is_active": ...}; null on rows written before they were
    # kept (and by a release that does not know them, while an upgrade runs).
    flags_before = models.JSONField(null=True, blank=True, help_text="superuser, staff and active flags before")
    flags_after = models.JSONField(null=True, blank=True, help_text="superuser, staff and active flags after")
    via = models.CharField(max_length=32, help_text="admin, application, or the sign-in source: oidc or ldap")
    # The directory groups the user was seen in at a sign-in through a directory (via oidc or ldap):
    # why the roles are what they are. Null on every other row.
    groups_seen = models.JSONField(null=True, blank=True, help_text="directory groups seen at the sign-in")

    class Meta:
        ordering = ["-id"]

    def __str__(self):
        return f"roles of {self.username}: {self.before} -> {self.after} by {self.changed_by or '(no user)'}"


class UserLanguage(models.Model):
    """The language a person chose in the language menu, kept per account so it follows them
    to every device and every sign-in (console/languages.py applies it). No row: no choice,
    and the browser's language decides."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True,
                                related_name="console_language")
    language = models.CharField(max_length=16, help_text="a code of settings.LANGUAGES, e.g. en or zh-hans")
    changed_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"{self.user} speaks {self.language}"


class DirectoryIdentity(models.Model):
    """Who a directory says a console account is (design §14): its source and its stable key there
    (OpenID Connect: the issuer and the subject; LDAP: the entry's objectGUID, else its DN), never a
    display name, so two people who share a name are two accounts and four eyes means two people.
    The account is created at its first sign-in and never linked to a local account of the same name."""

    class Source(models.TextChoices):
        OIDC = "oidc"
        LDAP = "ldap"

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="directory_identity")
    source = models.CharField(max_length=8, choices=Source.choices)
    key = models.TextField(help_text="oidc: issuer and subject; ldap: objectGUID or DN (lower case)")
    groups = models.JSONField(default=list, help_text="the groups seen at the last sign-in")
    first_sign_in = models.DateTimeField(auto_now_add=True)
    last_sign_in = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["source", "key"], name="directory_identity_source_key")]

    def __str__(self):
        return f"{self.source} {self.key}"


class BreakGlassSignIn(models.Model):
    """A local-password sign-in while LOCAL_SIGN_IN=false (only superusers may then): one row each,
    append-only like the role-change audit. No foreign key: the record outlives the account."""

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    user_id = models.BigIntegerField()
    username = models.CharField(max_length=150)
    address = models.CharField(max_length=64, blank=True, help_text="REMOTE_ADDR of the sign-in")

    class Meta:
        ordering = ["-id"]

    def __str__(self):
        return f"break-glass sign-in of {self.username} at {self.at}"


class AnalyticsSnapshot(models.Model):
    """One computation of the analytics page's figures (console.analytics, schedule
    tidy-analytics): the rows of its statements as they came, labels rendered when read. The page
    reads the newest; the task keeps the newest few."""

    computed_at = models.DateTimeField(help_text="the `now` the figures were computed for")
    duration_ms = models.FloatField(default=0, help_text="how long the computation took")
    figures = models.JSONField(help_text="percentile and weekly rows, and the trend's first Monday")

    class Meta:
        indexes = [models.Index(fields=["-computed_at"], name="analytics_snapshot_newest_idx")]

    def __str__(self):
        return f"analytics as of {self.computed_at:%Y-%m-%d %H:%M}"
