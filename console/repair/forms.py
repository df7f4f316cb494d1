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
from django.utils.functional import lazy
from django.utils.translation import gettext_lazy as _

from console.input_checks import BIGINT_MAX, BoundedDateTimeField, SafeInputForm
from console.readers.paused import AGE_BUCKETS
from console.repair import registry
from console.repair.registry import RepairAction
from console.repair.rules import REASON_MAX_LENGTH, REASON_MIN_LENGTH


def _format(template, **values) -> str:
    return str(template) % values


# A translated template with its values, translated when shown (form fields are built at import).
_lazy_format = lazy(_format, str)

# The paused list's age buckets (console.readers.paused.AGE_BUCKETS), as the batch selection names them.
AGE_TEXTS = {"lt1h": _("under 1 hour"), "1h-8h": _("1 to 8 hours"), "8h-24h": _("8 to 24 hours"),
             "gt24h": _("over 24 hours")}


def new_key() -> str:
    return uuid.uuid4().hex


class ReasonFields(SafeInputForm):
    multiline_fields = ("reason_text",)
    # Longer than any accepted reason, so an over-long one is still refused (and audited) by the
    # service; far longer is hostile.
    max_raw_length = 2 * REASON_MAX_LENGTH

    reason_code = forms.CharField(required=False, label=_("Reason code"), widget=forms.Select)
    reason_text = forms.CharField(
        required=False, label=_("Written reason"), strip=True, max_length=REASON_MAX_LENGTH,
        help_text=_lazy_format(_("At least %(min)s characters: what you saw, what you checked, why this action."),
                               min=REASON_MIN_LENGTH),
        widget=forms.Textarea(attrs={"rows": 3, "minlength": REASON_MIN_LENGTH}))

    def __init__(self, *args, action: str, pause_reason: str | None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["reason_code"].widget.choices = [("", _("Choose a reason code"))] + [
            (c.code, _lazy_format(_("%(label)s (%(code)s)"), label=c.label, code=c.code))
            for c in registry.codes_for(action, pause_reason)]


class RepairForm(ReasonFields):
    """Reason (all actions) plus, for an action whose spec asks for them (reconcile always, a
    cancel while a vehicle may be moving the tray), the codes read on the floor."""

    tray_code = forms.CharField(required=False, label=_("Tray code (scan or type)"), max_length=200,
                                widget=forms.TextInput(attrs={"autocomplete": "off", "autocapitalize": "characters",
                                                              "spellcheck": "false", "inputmode": "text",
                                                              "data-scan": ""}))
    space_code = forms.CharField(required=False, label=_("Space code where the tray stands (scan or type)"),
                                 max_length=200,
                                 widget=forms.TextInput(attrs={"autocomplete": "off", "autocapitalize": "characters",
                                                               "spellcheck": "false", "data-scan": ""}))

    def __init__(self, *args, action: str, pause_reason: str | None, scans: bool | None = None, **kwargs):
        """`scans`: whether the form asks for the scanned codes on the current evidence
        (registry.scans_asked); None: whenever the action may ask for them (checking a post)."""
        super().__init__(*args, action=action, pause_reason=pause_reason, **kwargs)
        if scans is None:
            scans = registry.spec(action).scans is not None
        if not scans:
            del self.fields["tray_code"]
            del self.fields["space_code"]


class ConfirmFields(SafeInputForm):
    fingerprint = forms.CharField(widget=forms.HiddenInput, max_length=64)
    idempotency_key = forms.CharField(widget=forms.HiddenInput, max_length=64)


class ProposalDecisionForm(ReasonFields, ConfirmFields):
    fingerprint = forms.CharField(widget=forms.HiddenInput, max_length=64, required=False)


class BatchSelectForm(SafeInputForm):
    """The paused list's filters (same names: reason, origin, age, q), to choose a batch."""

    reason = forms.CharField(required=False, label=_("Pause reason"), widget=forms.Select, max_length=100)
    origin = forms.ChoiceField(required=False, label=_("Origin"), choices=[
        ("", _("Any origin")), ("AUTOMATIC", "AUTOMATIC"), ("MANUAL", "MANUAL")])
    age = forms.ChoiceField(required=False, label=_("Paused for"), choices=[("", _("Any time"))])
    q = forms.CharField(required=False, label=_("Workflow, tray or space"), max_length=100)
    aisle = forms.CharField(required=False, label=_("Aisle"), max_length=64)

    def __init__(self, *args, reasons: list[str] = (), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["reason"].widget.choices = [("", _("Any reason"))] + [(r, r) for r in reasons]
        self.fields["age"].choices = [("", _("Any time"))] + [(k, AGE_TEXTS.get(k, label))
                                                             for k, label, _b, _e in AGE_BUCKETS]


class BatchApplyForm(ReasonFields):
    idempotency_key = forms.CharField(widget=forms.HiddenInput, max_length=64)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, action=RepairAction.RECHECK, pause_reason=None, **kwargs)


REASON_CHOICES = [("", _("Any reason"))] + [(c.code, c.code) for c in registry.REASON_CODES]
LOCAL_TIME = forms.DateTimeInput(attrs={"type": "datetime-local"})


class AuditFilterForm(SafeInputForm):
    integer_fields = {"workflow": (1, BIGINT_MAX), "batch": (1, BIGINT_MAX)}

    user = forms.CharField(required=False, label=_("User"), max_length=150)
    action = forms.ChoiceField(required=False, label=_("Action"), choices=[
        ("", _("Any action")), *[(s.code, s.label) for s in registry.SPECS]])
    reason_code = forms.ChoiceField(required=False, label=_("Reason code"),
                                    choices=REASON_CHOICES)
    outcome = forms.ChoiceField(required=False, label=_("Outcome"), choices=[
        ("", _("Any outcome")), ("APPLIED", _("Applied")), ("PROPOSED", _("Proposed")), ("REJECTED", _("Rejected")),
        ("REFUSED", _("Refused"))])
    workflow = forms.IntegerField(required=False, min_value=1, label=_("Workflow"))
    batch = forms.IntegerField(required=False, min_value=1, label=_("Batch"))
    since = BoundedDateTimeField(required=False, label=_("From"), widget=LOCAL_TIME)
    until = BoundedDateTimeField(required=False, label=_("Until"), widget=LOCAL_TIME)

