"""Validated input of the notification pages: a bad value is a 400 naming the field."""

from datetime import timedelta

from django import forms
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy

from console.input_checks import BoundedDateTimeField, SafeInputForm
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


MAX_SILENCE = timedelta(days=7)
LOCAL_TIME = forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M")


class SilenceForm(SafeInputForm):
    """A new silence: matchers (each blank = any), when, and why. A bad value is a 400 naming the
    field and nothing is stored."""

    multiline_fields = ("comment",)
    max_raw_length = 2100

    event = forms.ChoiceField(required=False, label=gettext_lazy("Event"),
                              choices=[("", gettext_lazy("Any event")), *Event.choices])
    reason = forms.CharField(required=False, max_length=200, strip=True, label=gettext_lazy("Reason code"),
                             help_text=gettext_lazy("blank: any reason"))
    aisle = forms.CharField(required=False, max_length=64, strip=True, label=gettext_lazy("Aisle"),
                            help_text=gettext_lazy("blank: any aisle"))
    starts_at = BoundedDateTimeField(required=False, label=gettext_lazy("Starts"), widget=LOCAL_TIME,
                                    help_text=gettext_lazy("blank: now"))
    ends_at = BoundedDateTimeField(label=gettext_lazy("Ends"), widget=LOCAL_TIME,
                                  help_text=gettext_lazy("at most 7 days after the start"))
    comment = forms.CharField(max_length=2000, strip=True, label=gettext_lazy("Comment"),
                              widget=forms.Textarea(attrs={"rows": 2}),
                              help_text=gettext_lazy("why: the planned work, who to ask"))

    def clean(self):
        data = super().clean()
        now = timezone.now()
        starts, ends = data.get("starts_at") or now, data.get("ends_at")
        data["starts_at"] = starts
        if ends is None:
            return data
        if ends <= starts:
            self.add_error("ends_at", gettext("The end must be after the start."))
        elif ends - starts > MAX_SILENCE:
            self.add_error("ends_at", gettext("A silence lasts at most 7 days after its start."))
        elif ends <= now:
            self.add_error("ends_at", gettext("The end is already past."))
        return data
