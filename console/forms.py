"""Filter forms of the console's list pages.

NOTE: this file was accidentally overwritten by the repair work (both briefs named
console/forms.py); it was reconstructed from its callers (console/views.py and the paused and
locks templates). The repair forms live in console/repair_forms.py. Check it against your copy.
"""

from django import forms
from django.core.exceptions import ValidationError

from console.selectors import AGE_LABELS, SORTS, Cursor, LockCursor, PausedFilters


def _cursor(value: str, cls):
    if not value:
        return None
    try:
        return cls.decode(value)
    except ValueError as exc:
        raise ValidationError("That list position is not valid any more; showing the first page.") from exc


class PausedListForm(forms.Form):
    q = forms.CharField(required=False, max_length=100, strip=True, label="Search",
                        help_text="A workflow id, a tray code or a space id (exact).")
    reason = forms.CharField(required=False, max_length=100)
    origin = forms.CharField(required=False, max_length=20)
    age = forms.CharField(required=False, max_length=20)
    sort = forms.CharField(required=False, max_length=10)
    after = forms.CharField(required=False, max_length=64)
    before = forms.CharField(required=False, max_length=64)

    def clean_age(self):
        age = self.cleaned_data["age"]
        if age and age not in AGE_LABELS:
            raise ValidationError(f"Unknown age bucket {age!r}.")
        return age

    def clean_sort(self):
        sort = self.cleaned_data["sort"] or "oldest"
        if sort not in SORTS:
            raise ValidationError(f"Unknown sort {sort!r}.")
        return sort

    def clean_after(self):
        return _cursor(self.cleaned_data["after"], Cursor)

    def clean_before(self):
        return _cursor(self.cleaned_data["before"], Cursor)

    def filters(self) -> PausedFilters:
        data = getattr(self, "cleaned_data", {})
        return PausedFilters(reason=data.get("reason") or "", origin=data.get("origin") or "",
                             age=data.get("age") or "", q=data.get("q") or "", sort=data.get("sort") or "oldest",
                             after=data.get("after"), before=data.get("before"))


class LocksForm(forms.Form):
    q = forms.CharField(required=False, max_length=100, strip=True)
    after = forms.CharField(required=False, max_length=64)

    def clean_after(self):
        return _cursor(self.cleaned_data["after"], LockCursor)
