"""The analytics page's query string: only its format. Anything else is a 400 naming the field."""

from django import forms
from django.utils.translation import gettext_lazy

from console.input_checks import SafeInputForm


class AnalyticsForm(SafeInputForm):
    format = forms.ChoiceField(required=False, label=gettext_lazy("Format"),
                               choices=[("", gettext_lazy("page")), ("html", gettext_lazy("page")), ("csv", "CSV")])
