"""The note form: 1 to WorkflowNote.TEXT_MAX_LENGTH characters, no control characters other than
line breaks and tabs (a 400 naming the field otherwise)."""

from django import forms
from django.utils.functional import lazy
from django.utils.translation import gettext, gettext_lazy

from console.input_checks import no_control_characters
from console.models import WorkflowNote


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
