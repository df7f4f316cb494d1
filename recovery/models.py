"""Models: the WMS tables (owned by the WMS, unmanaged) and the recovery journal (ours).

The WMS models declare every contract column of the WMS tables (docs/architecture.md §3) so the
console can read them with the ORM; all recovery mutations go through raw SQL in `recovery.engine.transaction`.
"""

import re

from django.db import models
from django.db.models.functions import Now

# --- WMS tables (docs/architecture.md §3): managed = False, created by `manage.py wms_schema` -------------


class TidyWorkflow(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "ACTIVE"
        COMPLETED = "COMPLETED"
        PAUSED_RECOVERY = "PAUSED_RECOVERY"
        CANCELLED = "CANCELLED"

    class Origin(models.TextChoices):
        AUTOMATIC = "AUTOMATIC"
        MANUAL = "MANUAL"

    workflow_id = models.BigAutoField(primary_key=True)
    origin = models.TextField(default=Origin.AUTOMATIC)
    status = models.TextField(default=Status.ACTIVE)
    pause_reason = models.TextField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        managed = False
        db_table = '"alg"."tidy_workflow"'

    def __str__(self):
        return f"workflow {self.workflow_id} ({self.status})"


class TidyStep(models.Model):
    class Status(models.TextChoices):
        PENDING = "PENDING"
        DISPATCHED = "DISPATCHED"
        COMPLETED = "COMPLETED"
        PAUSED_RECOVERY = "PAUSED_RECOVERY"
        CANCELLED = "CANCELLED"

    step_id = models.BigAutoField(primary_key=True)
    workflow = models.ForeignKey(TidyWorkflow, on_delete=models.DO_NOTHING, related_name="steps",
                                 db_column="workflow_id")
    step_no = models.IntegerField()
    tray_code = models.TextField()
    cargo_space_id = models.TextField()
    target_cargo_space_id = models.TextField()
    status = models.TextField(default=Status.PENDING)
    pause_reason = models.TextField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        managed = False
        db_table = '"alg"."tidy_step"'
        ordering = ["workflow_id", "step_no"]

    @property
    def job_id(self) -> str:
        return tidy_job_id(self.workflow_id, self.step_id)


class TidySpaceLock(models.Model):
    lock_id = models.BigAutoField(primary_key=True)
    workflow = models.ForeignKey(TidyWorkflow, on_delete=models.DO_NOTHING, related_name="locks",
                                 db_column="workflow_id")
    cargo_space_id = models.TextField(unique=True)
    locked_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        managed = False
        db_table = '"alg"."tidy_space_lock"'


class TidyCallbackEvent(models.Model):
    class Stage(models.TextChoices):
        MOVE_FINISHED = "MOVE_FINISHED"
        OUTBOUND_FINISHED = "OUTBOUND_FINISHED"
        RECOVERY_FINISHED = "RECOVERY_FINISHED"

    event_id = models.BigAutoField(primary_key=True)
    workflow_id = models.BigIntegerField()
    step_id = models.BigIntegerField()
    job_id = models.TextField()
    stage = models.TextField()
    received_at = models.DateTimeField(auto_now_add=True)
    payload = models.JSONField(null=True, blank=True)

    class Meta:
        managed = False
        db_table = '"alg"."tidy_callback_event"'


class MydoJob(models.Model):
    """An active WMS job; in_or_out = 28 is a tidy move."""

    job_id = models.TextField(primary_key=True)
    in_or_out = models.IntegerField()
    status = models.IntegerField(default=1)
    tray_code = models.TextField()
    cargo_space_id = models.TextField()
    target_cargo_space_id = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        managed = False
        db_table = '"public"."mydo_job"'


class MydoJobFinish(models.Model):
    """The archive of finished jobs (status 4)."""

    finish_id = models.BigAutoField(primary_key=True)
    job_id = models.TextField()
    in_or_out = models.IntegerField()
    status = models.IntegerField(default=4)
    tray_code = models.TextField()
    cargo_space_id = models.TextField()
    target_cargo_space_id = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        managed = False
        db_table = '"public"."mydo_job_finish"'


class BasStock(models.Model):
    stock_id = models.BigAutoField(primary_key=True)
    tray_code = models.TextField()
    cargo_space_id = models.TextField(null=True)
    sku = models.TextField()
    qty = models.DecimalField(max_digits=20, decimal_places=4)

    class Meta:
        managed = False
        db_table = '"public"."bas_stock"'


class BasCargoSpace(models.Model):
    cargo_space_id = models.TextField(primary_key=True)
    tray_code = models.TextField(null=True, blank=True)

    class Meta:
        managed = False
        db_table = '"public"."bas_cargo_space"'


def tidy_job_id(workflow_id: int, step_id: int) -> str:
    """The deterministic move-job id of a tidy step: TDY-<workflowId>-<stepId>."""
    return f"TDY-{workflow_id}-{step_id}"


# A tidy job id as people type it (any case), its workflow and step ids as groups.
TIDY_JOB_ID = re.compile(r"TDY-(\d{1,18})-(\d{1,18})", re.IGNORECASE)


# --- Recovery journal (console-owned, managed by migrations) ---------------------------------


class RecoveryCycle(models.Model):
    """One recovery cycle: when it ran, what it decided, what it skipped, what failed."""

    class Outcome(models.TextChoices):
        RUNNING = "RUNNING"
        SUCCEEDED = "SUCCEEDED"
        FAILED = "FAILED"

    class Trigger(models.TextChoices):
        SCHEDULE = "SCHEDULE"
        STARTUP = "STARTUP"
        MANUAL = "MANUAL"

    class Mode(models.TextChoices):
        APPLY = "apply"
        OBSERVE = "observe"

    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, default=Outcome.RUNNING)
    trigger = models.CharField(max_length=16, choices=Trigger.choices, default=Trigger.MANUAL)
    worker = models.CharField(max_length=200, blank=True, help_text="host:pid that ran the cycle")
    examined = models.IntegerField(default=0, help_text="active workflows classified")
    decision_counts = models.JSONField(default=dict, help_text="applied decisions per kind")
    skipped = models.IntegerField(default=0, help_text="workflows locked by another transaction")
    stale = models.IntegerField(default=0, help_text="decisions not applied: evidence changed")
    errors = models.IntegerField(default=0, help_text="workflows whose transaction failed")
    duration_ms = models.IntegerField(null=True, blank=True)
    paused_total = models.IntegerField(null=True, blank=True, help_text="paused workflows after the cycle")
    error_text = models.TextField(blank=True)
    # The shard this cycle classified (workflow_id % shard_count); null: every active workflow
    # (the start-up cycle, `recover --once`).
    shard = models.IntegerField(null=True, blank=True)
    # Database defaults too: a node still on the previous release keeps creating cycles while a
    # rolling upgrade adds these columns.
    shard_count = models.IntegerField(default=1, db_default=1)
    backlog = models.IntegerField(default=0, db_default=0, help_text="workflows needing a decision left to the next "
                                                       "cycle by the cycle's budget")
    # RECOVERY_MODE when the cycle ran: an observing cycle's decision_counts are the decisions it
    # would have made, journaled as observed and applied to nothing (docs/architecture.md §16).
    mode = models.CharField(max_length=16, choices=Mode.choices, default=Mode.APPLY, db_default=Mode.APPLY)
    # The cycle failed because the database could not be reached (a cut connection, a restart):
    # the runner retries within seconds, and such a cycle is no failure of recovery itself
    # (docs/architecture.md §7, "Losing the database").
    database_unreachable = models.BooleanField(default=False, db_default=False)

    class Meta:
        ordering = ["-started_at"]
        indexes = [
            models.Index(fields=["outcome", "-finished_at"]),
            # The live pages' newest cycles, /health/ready and retention (recovery/runtime/retention.py).
            models.Index(fields=["-started_at"], name="recovery_cycle_started_idx"),
        ]

    def __str__(self):
        return f"cycle {self.pk} {self.outcome}"


class RecoveryDecision(models.Model):
    """A non-trivial decision (anything but 'leave') with the evidence it was made on."""

    class Source(models.TextChoices):
        RECOVERY = "RECOVERY"
        CALLBACK = "CALLBACK"
        REPAIR = "REPAIR"

    cycle = models.ForeignKey(RecoveryCycle, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="decisions")
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.RECOVERY)
    decided_at = models.DateTimeField(auto_now_add=True)
    workflow_id = models.BigIntegerField(db_index=True)
    step_id = models.BigIntegerField(null=True, blank=True)
    action = models.CharField(max_length=16)
    reason = models.CharField(max_length=64, blank=True)
    rule = models.CharField(max_length=64, blank=True)
    evidence = models.JSONField()
    fingerprint = models.CharField(max_length=64)
    # Decided by a cycle in observe mode (RECOVERY_MODE=observe): journaled with its evidence,
    # applied to nothing. Every reader of applied decisions (the workflow page's pause evidence,
    # the metrics, the handover, analytics) leaves these out (docs/architecture.md §16).
    observed = models.BooleanField(default=False, db_default=False)

    class Meta:
        ordering = ["-decided_at"]
        indexes = [
            models.Index(fields=["workflow_id", "-decided_at"]),
            # A workflow's decisions in their own order, a page at a time (the case file, §16).
            models.Index(fields=["workflow_id", "id"], name="recovery_decision_wf_id_idx"),
            # The metrics' recent decisions and retention's oldest ones (recovery/runtime/retention.py).
            models.Index(fields=["decided_at"], name="recovery_decision_time_idx"),
            # /recovery/observe/: the observed decisions, newest first.
            models.Index(fields=["-decided_at", "-id"], condition=models.Q(observed=True),
                         name="recovery_decision_observed_idx"),
            # The analytics' pauses in a window: the few applied PAUSE decisions, not every decision
            # of the window (callbacks journal one per finish; design §16, cost independent of history).
            models.Index(fields=["decided_at"], condition=models.Q(action="PAUSE", observed=False),
                         name="recovery_decision_pause_idx"),
        ]
        # At most one decision per workflow per cycle, enforced by the database: a second
        # decision in the same cycle (two workers believing they own one shard) is refused.
        # Decisions outside a cycle (callbacks, repairs) have no cycle and are not limited.
        constraints = [models.UniqueConstraint(fields=["cycle", "workflow_id"],
                                               name="recovery_decision_once_per_cycle")]

    def __str__(self):
        return f"{self.action} {self.reason} on workflow {self.workflow_id}"


# --- WCS callback receipts and the outbound HTTP journal (console-owned) ---------------------


class CallbackReceipt(models.Model):
    """Every WCS callback request received, whatever its answer (docs/architecture.md §8).

    alg.tidy_callback_event holds only the events that took effect; this table also keeps the
    duplicates and the refused ones (paused workflow, unknown job, malformed request), so the
    console can show a supervisor what WCS reported while a workflow was paused. Refused
    requests change no WMS row: this receipt is console data.

    Requests failing authentication (401) are counted, never trusted: one UNAUTHORIZED row per
    endpoint and minute, `request_count` requests in it, the last remote address, no payload;
    so an unauthenticated flood adds at most two rows a minute. Every other row is one request
    (`request_count` 1): a callback counter is the sum of `request_count`.
    """

    class Endpoint(models.TextChoices):
        JOB_FINISH = "job-finish"
        JOB_STATUS = "job-status"

    class Outcome(models.TextChoices):
        ACCEPTED = "ACCEPTED"  # took effect (move completed and/or step advanced, status set)
        DUPLICATE = "DUPLICATE"  # already applied; answered 200, nothing moved
        REFUSED_PAUSED = "REFUSED_PAUSED"  # 409: workflow PAUSED_RECOVERY
        REFUSED_CONFLICT = "REFUSED_CONFLICT"  # 409: evidence or state does not allow it
        UNKNOWN_JOB = "UNKNOWN_JOB"  # 404
        BAD_REQUEST = "BAD_REQUEST"  # 400
        UNAVAILABLE = "UNAVAILABLE"  # 503: lock timeout or database failure; nothing changed
        UNAUTHORIZED = "UNAUTHORIZED"  # 401: per endpoint and minute, counted in request_count
        REPORT_MISMATCH = "REPORT_MISMATCH"  # 409: job-finish named another tray or place than the step's
        STALE_REPORT = "STALE_REPORT"  # 200: job-status with a sequence not above the job's highest; nothing changed

    received_at = models.DateTimeField(auto_now_add=True)
    endpoint = models.CharField(max_length=16, choices=Endpoint.choices)
    job_id = models.CharField(max_length=200, blank=True)
    workflow_id = models.BigIntegerField(null=True, blank=True)
    step_id = models.BigIntegerField(null=True, blank=True)
    stage = models.CharField(max_length=64, blank=True, help_text="job-finish stage")
    job_status = models.IntegerField(null=True, blank=True, help_text="job-status: the reported status")
    wcs_event_id = models.CharField(max_length=200, blank=True)
    http_status = models.IntegerField()
    outcome = models.CharField(max_length=32, choices=Outcome.choices)
    message = models.TextField(blank=True)
    payload = models.JSONField(null=True, blank=True, help_text="the request body as received")
    duration_ms = models.FloatField(null=True, blank=True)
    remote_addr = models.GenericIPAddressField(null=True, blank=True, help_text="UNAUTHORIZED: the last sender")
    request_count = models.PositiveIntegerField(default=1, db_default=1, help_text="requests this row stands for")
    # The WCS's own order of its reports about one job (docs/architecture.md §8 "Explicit order").
    sequence = models.BigIntegerField(null=True, blank=True, help_text="the report's sequence, when sent")
    # Load identity and delivery point as the WCS reported them (job-finish), and, for a
    # REPORT_MISMATCH, both sides: {"expected": {...}, "reported": {...}}.
    tray_code = models.CharField(max_length=200, blank=True, default="", db_default="",
                                 help_text="job-finish: the tray the WCS delivered")
    location = models.CharField(max_length=200, blank=True, default="", db_default="",
                                help_text="job-finish: the cargo space the WCS delivered to")
    mismatch = models.JSONField(null=True, blank=True, help_text="REPORT_MISMATCH: expected and reported")
    # The top-level fields the request carried that the contract does not know: each distinct name
    # once (cut to 64 characters), at most 50, and how many more there were. Never evidence, and not
    # what the metric counts (CallbackFieldTotal, counted when the request is read).
    unknown_fields = models.JSONField(null=True, blank=True,
                                      help_text="unknown top-level field names (distinct, cut to 64, at most 50)")
    unknown_fields_rest = models.IntegerField(default=0, db_default=0,
                                              help_text="unknown field names beyond the 50 kept")

    class Meta:
        ordering = ["-received_at", "-id"]
        indexes = [
            models.Index(fields=["workflow_id", "-received_at"], name="callback_receipt_wf_idx"),
            # A workflow's receipts in their own order, a page at a time (the case file, §16).
            models.Index(fields=["workflow_id", "id"], name="callback_receipt_wf_id_idx"),
            models.Index(fields=["-received_at"], name="callback_receipt_time_idx"),
            # A job's reports, newest first: its highest sequence and its latest finish report.
            models.Index(fields=["job_id", "-id"], name="callback_receipt_job_idx"),
        ]

    def __str__(self):
        return f"{self.endpoint} {self.job_id} -> {self.http_status} {self.outcome}"


class OutboundHttpRequest(models.Model):
    """Every outbound HTTP request the project makes (recovery.engine.wcs.http_request journals it).

    It lets anyone show that no WCS task-state request is ever made: the only WCS request
    the console makes is the vehicle snapshot."""

    started_at = models.DateTimeField()
    purpose = models.CharField(max_length=64, help_text="e.g. vehicle-snapshot, simulator-callback")
    method = models.CharField(max_length=8)
    url = models.TextField()
    status = models.IntegerField(null=True, blank=True, help_text="HTTP status; null when no answer")
    duration_ms = models.FloatField()
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [models.Index(fields=["-started_at"], name="outbound_http_time_idx")]

    def __str__(self):
        return f"{self.method} {self.url} -> {self.status or self.error}"


# --- journal counters (console-owned) ---------------------------------------------------------


class JournalTotal(models.Model):
    """Counts of journal rows folded in by recovery.runtime.retention before old rows are deleted.

    A metric counter (tidy_callbacks_total, tidy_recovery_decisions_total, tidy_outbound_requests_total:
    journal `outbound`, labels target and outcome) is this total plus the
    rows not folded yet (newer than JournalFold.folded_before), so it never goes down when the
    retention task deletes old rows."""

    journal = models.CharField(max_length=32, help_text="callbacks | decisions")
    label1 = models.CharField(max_length=64, help_text="callbacks: endpoint; decisions: action")
    label2 = models.CharField(max_length=64, help_text="callbacks: outcome; decisions: source")
    total = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["journal", "label1", "label2"], name="journal_total_key")]

    def __str__(self):
        return f"{self.journal} {self.label1} {self.label2} = {self.total}"


class CallbackFieldLabel(models.Model):
    """The names of unknown callback fields that are labels of tidy_callback_unknown_fields_total
    (the tolerant reader, docs/architecture.md §8): at most MAX_NAMES of them for the whole site,
    whichever process saw them, kept for good; every other name is counted as `other`. The cap is
    the database's: a name takes a free `slot`, and there are no more than MAX_NAMES slots."""

    MAX_NAMES = 50

    slot = models.SmallIntegerField(primary_key=True)
    name = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(db_default=Now())

    class Meta:
        constraints = [models.CheckConstraint(condition=models.Q(slot__gte=1, slot__lte=50),
                                              name="callback_field_label_slots")]

    def __str__(self):
        return f"{self.slot}: {self.name}"


class CallbackFieldTotal(models.Model):
    """tidy_callback_unknown_fields_total, counted when a callback is read: per endpoint and label
    (a CallbackFieldLabel name or `other`), in a few rows per label (`shard`, from the database
    session), so callbacks on several connections rarely wait for one another's row. The metric
    sums the shards; nothing here is ever deleted, so the counter never goes down."""

    SHARDS = 8

    endpoint = models.CharField(max_length=16)
    field = models.CharField(max_length=64)
    shard = models.SmallIntegerField()
    total = models.BigIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["endpoint", "field", "shard"], name="callback_field_total_key")]

    def __str__(self):
        return f"{self.endpoint} {self.field} [{self.shard}] = {self.total}"


class JournalFold(models.Model):
    """Per journal: every row older than `folded_before` is counted in JournalTotal."""

    journal = models.CharField(max_length=32, primary_key=True)
    folded_before = models.DateTimeField()

    def __str__(self):
        return f"{self.journal} folded before {self.folded_before}"


# --- Cordons: places closed to new tidy work (docs/architecture.md §18) ----------------------------


class Cordon(models.Model):
    """An aisle or one cargo space closed to new tidy work from `created_at` until it is lifted
    (a CordonLift row) or `ends_at` passes. Append-only in the database (migration recovery
    0008_cordons): a row is never edited or deleted; lifting is a row of its own."""

    class Scope(models.TextChoices):
        AISLE = "AISLE"
        SPACE = "SPACE"

    scope = models.CharField(max_length=8, choices=Scope.choices)
    place = models.CharField(max_length=100, help_text="the aisle (as SPACE_CODE_PATTERN names it) or the space code")
    reason = models.TextField(help_text="why, as the shift lead wrote it")
    created_at = models.DateTimeField(db_default=Now())
    created_by = models.CharField(max_length=150, help_text="username as signed in at the time")
    ends_at = models.DateTimeField(null=True, blank=True, help_text="none: until lifted")

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["scope", "place"], name="recovery_cordon_place_idx")]
        constraints = [
            models.CheckConstraint(condition=models.Q(scope__in=["AISLE", "SPACE"]), name="recovery_cordon_scope"),
            models.CheckConstraint(
                condition=models.Q(ends_at__isnull=True) | models.Q(ends_at__gt=models.F("created_at")),
                name="recovery_cordon_ends_after_start"),
        ]

    def __str__(self):
        return f"cordon #{self.pk} ({self.scope} {self.place})"


class CordonLift(models.Model):
    """A cordon lifted before its end: who and when. At most one per cordon (its primary key)."""

    cordon = models.OneToOneField(Cordon, on_delete=models.PROTECT, primary_key=True, related_name="lift")
    lifted_at = models.DateTimeField(db_default=Now())
    lifted_by = models.CharField(max_length=150, help_text="username as signed in at the time")

    def __str__(self):
        return f"cordon #{self.cordon_id} lifted"


# --- Recovery processes: who runs recovery (docs/architecture.md §18) -------------------------------


class ProcessHeartbeat(models.Model):
    """One qcluster worker process that ran recovery: its cluster (`cluster`, as
    recovery.runtime.tasks.cluster_key names it), when it was first and last seen, and the shards it
    held when last seen. Written by the process itself (recovery.runtime.processes.beat); the console's
    processes page and `manage.py cluster_status` read it."""

    worker = models.CharField(max_length=200, primary_key=True, help_text="host:pid of the worker process")
    cluster = models.CharField(max_length=200, help_text="host:cluster-<pid of the qcluster>")
    host = models.CharField(max_length=200)
    cluster_pid = models.IntegerField()
    started_at = models.DateTimeField(db_default=Now())
    last_seen_at = models.DateTimeField(db_default=Now())
    shards = models.JSONField(default=list, help_text="the shards it held when last seen")
    shard_count = models.IntegerField(default=1, db_default=1)

    class Meta:
        indexes = [models.Index(fields=["-last_seen_at"], name="recovery_heartbeat_seen_idx")]

    def __str__(self):
        return f"{self.worker} of {self.cluster}"


class LogDrops(models.Model):
    """Log lines one process dropped because its log output did not keep up (a pipe nobody
    reads, a paused terminal, journald's back-pressure): logging never blocks the process, so a
    full log queue drops the line and counts it (recovery.logs.logcontext). The process writes its
    running total here from a thread of its own; /metrics sums the rows
    (`tidy_log_records_dropped_total`), so every web worker answers the same
    (docs/architecture.md, "Logging never blocks")."""

    process = models.CharField(max_length=200, unique=True, help_text="host:pid:start of the process")
    dropped = models.BigIntegerField(default=0)
    updated_at = models.DateTimeField()
