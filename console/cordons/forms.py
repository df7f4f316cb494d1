"""The cordon form: scope, place, a required reason and an optional end (a 400 naming the field
otherwise). The service (recovery.engine.cordons.cordon_create) checks the place and the end again."""

from django import forms
from django.utils.translation import gettext, gettext_lazy

from console.input_checks import BoundedDateTimeField, no_control_characters
from recovery.engine.cordons import PLACE_MAX, REASON_MAX
from recovery.models import Cordon

SCOPES = [(Cordon.Scope.AISLE, gettext_lazy("An aisle")), (Cordon.Scope.SPACE, gettext_lazy("One cargo space"))]


class CordonForm(forms.Form):
    """`scope` and `place` as the page posts them; a client may instead give `aisle` or
    `cargo_space_id` (or `space`) alone, which says both."""

    scope = forms.ChoiceField(choices=SCOPES, required=False, label=gettext_lazy("Cordon"),
                              initial=Cordon.Scope.AISLE)
    place = forms.CharField(max_length=PLACE_MAX, strip=True, required=False, label=gettext_lazy("Aisle or space code"))
    aisle = forms.CharField(max_length=PLACE_MAX, strip=True, required=False, widget=forms.HiddenInput)
    cargo_space_id = forms.CharField(max_length=PLACE_MAX, strip=True, required=False, widget=forms.HiddenInput)
    space = forms.CharField(max_length=PLACE_MAX, strip=True, required=False, widget=forms.HiddenInput)
    reason = forms.CharField(max_length=REASON_MAX, strip=True, label=gettext_lazy("Reason"),
                             widget=forms.Textarea(attrs={"rows": 2}))
    ends_at = BoundedDateTimeField(required=False, label=gettext_lazy("Ends (optional)"),
                                  widget=forms.DateTimeInput(attrs={"type": "datetime-local"}))

    def clean_place(self):
        place = self.cleaned_data["place"]
        no_control_characters(place)
        return place

    def clean_aisle(self):
        no_control_characters(self.cleaned_data["aisle"])
        return self.cleaned_data["aisle"]

    def clean_cargo_space_id(self):
        no_control_characters(self.cleaned_data["cargo_space_id"])
        return self.cleaned_data["cargo_space_id"]

    def clean_space(self):
        no_control_characters(self.cleaned_data["space"])
        return self.cleaned_data["space"]

    def clean_reason(self):
        reason = self.cleaned_data["reason"]
        no_control_characters(reason, allow_newlines=True)
        return reason

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        if not data.get("scope") and not data.get("place"):
            space = data.get("cargo_space_id") or data.get("space")
            if data.get("aisle") and not space:
                data["scope"], data["place"] = Cordon.Scope.AISLE, data["aisle"]
            elif space and not data.get("aisle"):
                data["scope"], data["place"] = Cordon.Scope.SPACE, space
        if not data.get("scope"):
            self.add_error("scope", gettext("Choose an aisle or one cargo space."))
        elif not data.get("place"):
            self.add_error("place", gettext("Give the aisle or the space code."))
        return data
