"""Query-string forms of the console's list pages (paused workflows, locks): bad input gets a
clear message and falls back to a default, never a 500; hostile input (control characters,
non-ASCII digits, numbers out of range: console.input_checks) is refused with 400.

Owned by the supervisor console; the repair flow's forms live in console/repair/forms.py.
"""

from django import forms
from django.utils.translation import gettext_lazy

from console.input_checks import SafeInputForm, keyset_position_problem
from console.pages import cursor_field
from console.readers import Cursor
from console.readers.paused import AGE_BUCKETS, SORTS, PausedFilters
from console.workflows.selectors import LockCursor


class PausedListForm(SafeInputForm):
    extra_checks = {"after": keyset_position_problem, "before": keyset_position_problem}

    # Reason and origin are free text: real WMS data may hold codes the console does not know,
    # and the facet counts list them too.
    reason = forms.CharField(required=False, max_length=100, strip=True, label=gettext_lazy("Reason code"))
    origin = forms.CharField(required=False, max_length=40, strip=True, label=gettext_lazy("Origin"))
    age = forms.ChoiceField(required=False, label=gettext_lazy("Paused for"),
                            choices=[("", gettext_lazy("Any time"))] + [(k, label) for k, label, _, _ in AGE_BUCKETS])
    q = forms.CharField(required=False, max_length=100, strip=True, label=gettext_lazy("Workflow, tray or space"),
                        help_text=gettext_lazy("Exact workflow id, tray code or cargo space"))
    sort = forms.ChoiceField(required=False, label=gettext_lazy("Sort by age"), choices=list(SORTS.items()))
    aisle = forms.CharField(required=False, max_length=64, strip=True, label=gettext_lazy("Aisle"))
    after = forms.CharField(required=False, max_length=64)
    before = forms.CharField(required=False, max_length=64)

    def clean_after(self):
        return cursor_field(self.cleaned_data.get("after"), Cursor)

    def clean_before(self):
        return cursor_field(self.cleaned_data.get("before"), Cursor)

    def filters(self) -> PausedFilters:
        """The valid part of the input (an invalid field falls back to its default)."""
        data = getattr(self, "cleaned_data", {})
        return PausedFilters(
            reason=data.get("reason") or "", origin=data.get("origin") or "", age=data.get("age") or "",
            q=data.get("q") or "", sort=data.get("sort") or "oldest", aisle=data.get("aisle") or "",
            after=data.get("after"), before=data.get("before"),
        )


class LocksForm(SafeInputForm):
    extra_checks = {"after": keyset_position_problem}

    q = forms.CharField(required=False, max_length=100, strip=True, label=gettext_lazy("Space or workflow id"))
    after = forms.CharField(required=False, max_length=64)

    def clean_after(self):
        return cursor_field(self.cleaned_data.get("after"), LockCursor)
