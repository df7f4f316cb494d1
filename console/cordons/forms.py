"""The cordon form: scope, place, a required reason and an optional end (a 400 naming the field
otherwise). The service (recovery.cordons.cordon_create) checks the place and the end again."""

from django import forms
from django.utils.translation import gettext_lazy

from console.input_checks import no_control_characters
from recovery.cordons import PLACE_MAX, REASON_MAX
from recovery.models import Cordon

SCOPES = [(Cordon.Scope.AISLE, gettext_lazy("An aisle")), (Cordon.Scope.SPACE, gettext_lazy("One cargo space"))]


class CordonForm(forms.Form):
    scope = forms.ChoiceField(choices=SCOPES, label=gettext_lazy("Cordon"), initial=Cordon.Scope.AISLE)
    place = forms.CharField(max_length=PLACE_MAX, strip=True, label=gettext_lazy("Aisle or space code"))
    reason = forms.CharField(max_length=REASON_MAX, strip=True, label=gettext_lazy("Reason"),
                             widget=forms.Textarea(attrs={"rows": 2}))
    ends_at = forms.DateTimeField(required=False, label=gettext_lazy("Ends (optional)"),
                                  widget=forms.DateTimeInput(attrs={"type": "datetime-local"}))

    def clean_place(self):
        place = self.cleaned_data["place"]
        no_control_characters(place)
        return place

    def clean_reason(self):
        reason = self.cleaned_data["reason"]
        no_control_characters(reason, allow_newlines=True)
        return reason
