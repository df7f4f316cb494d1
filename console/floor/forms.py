"""Forms of the floor pages (active list, search, handover). Bad input on search, the
handover's shift and a note is answered 400 naming the field; the active list, like the paused
list, falls back to its defaults with a message."""

import re
from datetime import datetime

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext, gettext_lazy

from console.floor.selectors import SECTIONS, ActiveFilters
from console.input_checks import is_ascii_int, no_control_characters, time_in_range, time_out_of_range
from console.pages import cursor_field
from console.readers import Cursor
from console.readers.shifts import Shift, shift_starting, shift_starts, warehouse_zone

SEARCH_MAX_LENGTH = 100


class ActiveListForm(forms.Form):
    stalled = forms.BooleanField(required=False, label=gettext_lazy("Stalled only"))
    origin = forms.CharField(required=False, max_length=40, strip=True, label=gettext_lazy("Origin"))
    after = forms.CharField(required=False, max_length=64)
    before = forms.CharField(required=False, max_length=64)

    def clean_after(self):
        return cursor_field(self.cleaned_data.get("after"), Cursor)

    def clean_before(self):
        return cursor_field(self.cleaned_data.get("before"), Cursor)

    def filters(self) -> ActiveFilters:
        data = getattr(self, "cleaned_data", {})
        return ActiveFilters(stalled=bool(data.get("stalled")), origin=data.get("origin") or "",
                                   after=data.get("after"), before=data.get("before"))


class SearchForm(forms.Form):
    q = forms.CharField(required=False, max_length=SEARCH_MAX_LENGTH, strip=True,
                        label=gettext_lazy("Workflow, job, tray or space"),
                        validators=[no_control_characters],
                        help_text=gettext_lazy("Exact workflow id, job id (TDY-…), tray code or cargo space; "
                                               "scans welcome"))
    # The "Older results" position: the workflows below this id.
    before = forms.CharField(required=False, max_length=40, strip=False)

    def clean_before(self) -> int | None:
        text = self.cleaned_data.get("before")
        if not text:
            return None
        if not is_ascii_int(text, minimum=1):
            raise ValidationError(gettext("the value must be a whole number written with the digits 0-9"),
                                  code="invalid")
        return int(text)


SHIFT_PARAM = re.compile(r"(\d{4}-\d{2}-\d{2})@(\d{2}:\d{2})")


class HandoverForm(forms.Form):
    shift = forms.CharField(required=False, max_length=40, strip=True, validators=[no_control_characters],
                            label=gettext_lazy("Shift"),
                            help_text=gettext_lazy("YYYY-MM-DD@HH:MM, a shift start in warehouse time"))
    format = forms.ChoiceField(required=False, choices=[("", gettext_lazy("page")), ("html", gettext_lazy("page")),
                                                         ("csv", "CSV")])
    # One section alone, page by page (the overview's "and M more" links here).
    section = forms.ChoiceField(required=False, choices=[("", "")] + [(name, name) for name in SECTIONS])
    page = forms.CharField(required=False, max_length=7, strip=True)

    def clean_page(self) -> int:
        text = self.cleaned_data.get("page")
        if not text:
            return 1
        if not is_ascii_int(text, minimum=1, maximum=1_000_000):
            raise ValidationError(gettext("Give a page number from 1, written with the digits 0-9."), code="invalid")
        return int(text)

    def clean_shift(self) -> Shift | None:
        text = self.cleaned_data.get("shift")
        if not text:
            return None
        match = SHIFT_PARAM.fullmatch(text)
        try:
            if match is None:
                raise ValueError
            day = datetime.strptime(match.group(1), "%Y-%m-%d").date()
            clock = datetime.strptime(match.group(2), "%H:%M").time()
        except ValueError:
            raise ValidationError(gettext("Give a shift as YYYY-MM-DD@HH:MM, e.g. 2026-03-01@06:00."),
                                  code="invalid") from None
        # Far from the ends of the calendar, so the shifts around it can be computed and shown.
        if not time_in_range(datetime.combine(day, clock, tzinfo=warehouse_zone())):
            raise ValidationError(time_out_of_range().translated(), code="out_of_range")
        try:
            return shift_starting(day, clock)
        except ValueError:
            starts = ", ".join(t.strftime("%H:%M") for t in shift_starts())
            raise ValidationError(gettext("%(clock)s is not a shift start (shifts start at %(starts)s).")
                                  % {"clock": f"{clock:%H:%M}", "starts": starts}, code="not_a_shift") from None
