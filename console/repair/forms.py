"""Forms of the repair flow and the audit page (console/forms.py holds the list filters).

The repair forms only carry the input: whether a reason code is allowed, whether a written
reason is long enough and whether scanned codes match are decided (and audited) by the
service in console.repair (rules, frame), which maps its refusals back onto these fields.
Hostile values (control characters, NUL bytes, surrogates, non-ASCII digits, numbers beyond
bigint) never reach the service: SafeInputForm marks the form `refused` and the view answers 400
before anything, the audit included, is written.
"""

import uuid

from django import forms

from console.input_checks import BIGINT_MAX, SafeInputForm
from console.models import RepairAction
from console.repair import codes
from console.repair.rules import REASON_MAX_LENGTH, REASON_MIN_LENGTH, RECONCILE
from console.selectors import AGE_BUCKETS


def new_key() -> str:
    return uuid.uuid4().hex


class ReasonFields(SafeInputForm):
    multiline_fields = ("reason_text",)
    # Longer than any accepted reason, so an over-long one is still refused (and audited) by the
    # service; far longer is hostile.
    max_raw_length = 2 * REASON_MAX_LENGTH

    reason_code = forms.CharField(required=False, label="Reason code", widget=forms.Select)
    reason_text = forms.CharField(
        required=False, label="Written reason", strip=True, max_length=REASON_MAX_LENGTH,
        help_text=f"At least {REASON_MIN_LENGTH} characters: what you saw, what you checked, why this action.",
        widget=forms.Textarea(attrs={"rows": 3, "minlength": REASON_MIN_LENGTH}))

    def __init__(self, *args, action: str, pause_reason: str | None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["reason_code"].widget.choices = [("", "Choose a reason code")] + [
            (c.code, f"{c.label} ({c.code})") for c in codes.codes_for(action, pause_reason)]


class RepairForm(ReasonFields):
    """Reason (all actions) plus, for reconcile and for a cancel while a vehicle may be moving the
    tray (`floor_confirmation`), the codes read on the floor."""

    tray_code = forms.CharField(required=False, label="Tray code (scan or type)", max_length=200,
                                widget=forms.TextInput(attrs={"autocomplete": "off", "autocapitalize": "characters",
                                                              "spellcheck": "false", "inputmode": "text",
                                                              "data-scan": ""}))
    space_code = forms.CharField(required=False, label="Space code where the tray stands (scan or type)",
                                 max_length=200,
                                 widget=forms.TextInput(attrs={"autocomplete": "off", "autocapitalize": "characters",
                                                               "spellcheck": "false", "data-scan": ""}))

    def __init__(self, *args, action: str, pause_reason: str | None, floor_confirmation: bool = False, **kwargs):
        super().__init__(*args, action=action, pause_reason=pause_reason, **kwargs)
        if action not in RECONCILE and not (floor_confirmation and action == RepairAction.CANCEL_PROPOSE):
            del self.fields["tray_code"]
            del self.fields["space_code"]


class ConfirmFields(SafeInputForm):
    fingerprint = forms.CharField(widget=forms.HiddenInput, max_length=64)
    idempotency_key = forms.CharField(widget=forms.HiddenInput, max_length=64)


class ProposalDecisionForm(ReasonFields, ConfirmFields):
    fingerprint = forms.CharField(widget=forms.HiddenInput, max_length=64, required=False)


class BatchSelectForm(SafeInputForm):
    """The paused list's filters (same names: reason, origin, age, q), to choose a batch."""

    reason = forms.CharField(required=False, label="Pause reason", widget=forms.Select, max_length=100)
    origin = forms.ChoiceField(required=False, choices=[("", "Any origin"), ("AUTOMATIC", "AUTOMATIC"),
                                                        ("MANUAL", "MANUAL")])
    age = forms.ChoiceField(required=False, label="Paused for", choices=[("", "Any time")])
    q = forms.CharField(required=False, label="Workflow, tray or space", max_length=100)

    def __init__(self, *args, reasons: list[str] = (), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["reason"].widget.choices = [("", "Any reason")] + [(r, r) for r in reasons]
        self.fields["age"].choices = [("", "Any time")] + [(k, label) for k, label, _, _ in AGE_BUCKETS]


class BatchApplyForm(ReasonFields):
    idempotency_key = forms.CharField(widget=forms.HiddenInput, max_length=64)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, action=RepairAction.RECHECK, pause_reason=None, **kwargs)


REASON_CHOICES = [("", "Any reason")] + [(c.code, c.code) for c in codes.REASON_CODES]
LOCAL_TIME = forms.DateTimeInput(attrs={"type": "datetime-local"})


class AuditFilterForm(SafeInputForm):
    integer_fields = {"workflow": (1, BIGINT_MAX), "batch": (1, BIGINT_MAX)}

    user = forms.CharField(required=False, label="User", max_length=150)
    action = forms.ChoiceField(required=False, choices=[("", "Any action"), *RepairAction.choices])
    reason_code = forms.ChoiceField(required=False, label="Reason code",
                                    choices=REASON_CHOICES)
    outcome = forms.ChoiceField(required=False, choices=[("", "Any outcome"), ("APPLIED", "Applied"),
                                                         ("PROPOSED", "Proposed"), ("REJECTED", "Rejected"),
                                                         ("REFUSED", "Refused")])
    workflow = forms.IntegerField(required=False, min_value=1, label="Workflow")
    batch = forms.IntegerField(required=False, min_value=1, label="Batch")
    since = forms.DateTimeField(required=False, label="From", widget=LOCAL_TIME)
    until = forms.DateTimeField(required=False, label="Until", widget=LOCAL_TIME)

