"""Query-string forms of the operations pages. Bad input is answered 400 naming the field and reads
nothing more (docs/architecture.md §11)."""

from django import forms
from django.utils.translation import gettext_lazy

from console.input_checks import SafeInputForm, keyset_position_problem
from console.pages import cursor_field
from console.readers import Cursor
from recovery.engine.decisions import Action, Reason

OBSERVED_ACTIONS = [a.value for a in Action if a is not Action.LEAVE]


class ObservedForm(SafeInputForm):
    extra_checks = {"before": keyset_position_problem}

    action = forms.ChoiceField(required=False, label=gettext_lazy("Action"),
                               choices=[("", gettext_lazy("Any action"))] + [(a, a) for a in OBSERVED_ACTIONS])
    reason = forms.ChoiceField(required=False, label=gettext_lazy("Reason code"),
                               choices=[("", gettext_lazy("Any reason"))] + [(r.value, r.value) for r in Reason])
    before = forms.CharField(required=False, max_length=64)

    def clean_before(self):
        return cursor_field(self.cleaned_data.get("before"), Cursor)
