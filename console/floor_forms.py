"""Forms of the floor pages (active list, search, handover, notes). Bad input on search, the
handover's shift and a note is answered 400 naming the field; the active list, like the paused
list, falls back to its defaults with a message."""

import re
import unicodedata
from datetime import datetime

from django import forms
from django.core.exceptions import ValidationError
from django.utils.functional import lazy
from django.utils.translation import gettext, gettext_lazy

from console import floor
from console.forms import _cursor
from console.models import WorkflowNote
from console.selectors import Cursor

SEARCH_MAX_LENGTH = 100


def no_control_characters(value: str, *, allow_newlines: bool = False) -> None:
    allowed = {"\n", "\r", "\t"} if allow_newlines else set()
    if any(unicodedata.category(ch) == "Cc" and ch not in allowed for ch in value):
        raise ValidationError(gettext("Control characters are not allowed."), code="control_characters")


class ActiveListForm(forms.Form):
    stalled = forms.BooleanField(required=False, label=gettext_lazy("Stalled only"))
    origin = forms.CharField(required=False, max_length=40, strip=True, label=gettext_lazy("Origin"))
    after = forms.CharField(required=False, max_length=64)
    before = forms.CharField(required=False, max_length=64)

    def clean_after(self):
        return _cursor(self.cleaned_data.get("after"), Cursor)

    def clean_before(self):
        return _cursor(self.cleaned_data.get("before"), Cursor)

    def filters(self) -> floor.ActiveFilters:
        data = getattr(self, "cleaned_data", {})
        return floor.ActiveFilters(stalled=bool(data.get("stalled")), origin=data.get("origin") or "",
                                   after=data.get("after"), before=data.get("before"))


class SearchForm(forms.Form):
    q = forms.CharField(required=False, max_length=SEARCH_MAX_LENGTH, strip=True,
                        label=gettext_lazy("Workflow, job, tray or space"),
                        validators=[no_control_characters],
                        help_text=gettext_lazy("Exact workflow id, job id (TDY-…), tray code or cargo space; "
                                               "scans welcome"))


SHIFT_PARAM = re.compile(r"(\d{4}-\d{2}-\d{2})@(\d{2}:\d{2})")


class HandoverForm(forms.Form):
    shift = forms.CharField(required=False, max_length=40, strip=True, validators=[no_control_characters],
                            label=gettext_lazy("Shift"),
                            help_text=gettext_lazy("YYYY-MM-DD@HH:MM, a shift start in warehouse time"))
    format = forms.ChoiceField(required=False, choices=[("", gettext_lazy("page")), ("html", gettext_lazy("page")),
                                                         ("csv", "CSV")])

    def clean_shift(self) -> floor.Shift | None:
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
        try:
            return floor.shift_starting(day, clock)
        except ValueError:
            starts = ", ".join(t.strftime("%H:%M") for t in floor.shift_starts())
            raise ValidationError(gettext("%(clock)s is not a shift start (shifts start at %(starts)s).")
                                  % {"clock": f"{clock:%H:%M}", "starts": starts}, code="not_a_shift") from None


def _note_help_text() -> str:
    return gettext("What you saw or did; at most %(n)s characters. Notes cannot be edited or deleted.") % {
        "n": WorkflowNote.TEXT_MAX_LENGTH}


# Translated when a page shows it, not when the module loads.
_note_help = lazy(_note_help_text, str)


class NoteForm(forms.Form):
    text = forms.CharField(max_length=WorkflowNote.TEXT_MAX_LENGTH, strip=True, label=gettext_lazy("Note"),
                           widget=forms.Textarea(attrs={"rows": 3}),
                           help_text=_note_help())

    def clean_text(self):
        text = self.cleaned_data["text"]
        no_control_characters(text, allow_newlines=True)
        return text


def errors_text(form: forms.Form) -> str:
    """`field: message` for every error, for a 400 answer that names the field."""
    return "; ".join(f"{name}: {message}" for name, message in field_errors(form))


def field_errors(form: forms.Form) -> list[tuple[str, str]]:
    """(field, message) for every field in error: a page shows the field's name as it is (a
    parameter of the address, in any language) and the message in the reader's language."""
    return [(name, " ".join(errors)) for name, errors in form.errors.items()]
