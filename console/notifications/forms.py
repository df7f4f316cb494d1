"""Validated input of the notification pages: a bad value is a 400 naming the field."""

from django import forms
from django.utils.translation import gettext, gettext_lazy

from console.models import Notification
from console.notifications.events import Event

MAX_THRESHOLD_MINUTES = 7 * 24 * 60


class NotificationFilterForm(forms.Form):
    state = forms.ChoiceField(required=False, choices=[("", gettext_lazy("Any state")), *Notification.State.choices])
    event = forms.ChoiceField(required=False, choices=[("", gettext_lazy("Any event")), *Event.choices])


class MinutesField(forms.IntegerField):
    """Whole minutes in ASCII digits only (int() would also take other scripts' digits)."""

    def to_python(self, value):
        if isinstance(value, str) and value.strip() and not value.strip().isascii():
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        return super().to_python(value)


class ThresholdsForm(forms.Form):
    """One field per pause reason code, named by the code."""

    def __init__(self, *args, codes: list[str], initial_minutes: dict[str, int], **kwargs):
        super().__init__(*args, **kwargs)
        for code in codes:
            self.fields[code] = MinutesField(
                label=code, min_value=1, max_value=MAX_THRESHOLD_MINUTES, initial=initial_minutes.get(code),
                help_text=gettext("minutes, 1 to %(max)s") % {"max": MAX_THRESHOLD_MINUTES})

    def minutes(self) -> dict[str, int]:
        return {code: value for code, value in self.cleaned_data.items()}
