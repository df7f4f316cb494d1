"""Workflow notes on the workflow page: the notes section (also the answer to an htmx post) and
adding a note. Any console role may add one; notes are never edited (console.notes.services)."""

from django.http import Http404, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.functional import SimpleLazyObject
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from console.input_checks import errors_text
from console.notes.forms import NoteForm
from console.notes.services import note_create, notes_for_workflow
from console.pages import console_page
from recovery.models import TidyWorkflow


def notes_context(workflow_id: int, form: NoteForm | None = None) -> dict:
    """The notes section's context; the notes are read when the section is rendered (the
    workflow page's live refresh does not render it)."""
    return {"workflow_id": workflow_id,
            "notes": SimpleLazyObject(lambda: notes_for_workflow(workflow_id=workflow_id)),
            "note_form": form or NoteForm()}


@require_POST
@console_page
def note_add(request, workflow_id: int):
    if not TidyWorkflow.objects.filter(pk=workflow_id).exists():
        raise Http404(gettext("Workflow %(id)s does not exist.") % {"id": workflow_id})
    form = NoteForm(request.POST)
    if not form.is_valid():
        context = {**notes_context(workflow_id, form), "error": errors_text(form)}
        if request.htmx:
            # htmx does not swap a 4xx answer: the form comes back with its errors at 200.
            return render(request, "console/_notes.html", context)
        return render(request, "console/note_error.html", context, status=400)
    note_create(workflow_id=workflow_id, text=form.cleaned_data["text"], user=request.user)
    if request.htmx:
        return render(request, "console/_notes.html", notes_context(workflow_id))
    response = HttpResponseRedirect(reverse("workflow-detail", args=[workflow_id]) + "#notes")
    response.status_code = 303
    return response
