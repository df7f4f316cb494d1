"""Workflow notes on the workflow page: the notes section (also the answer to an htmx post) and
adding a note. Any console role may add one; notes are never edited (console.notes.services)."""

from django.http import Http404, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.functional import SimpleLazyObject
from django.utils.translation import gettext, ngettext

from console.input_checks import errors_text
from console.notes.forms import NoteForm
from console.notes.services import NoteRateLimited, note_create, notes_for_workflow
from console.pages import console_page
from recovery.models import TidyWorkflow


def notes_context(workflow_id: int, form: NoteForm | None = None) -> dict:
    """The notes section's context; the notes are read when the section is rendered (the
    workflow page's live refresh does not render it)."""
    return {"workflow_id": workflow_id,
            "notes": SimpleLazyObject(lambda: notes_for_workflow(workflow_id=workflow_id)),
            "note_form": form or NoteForm()}


@console_page(post=True)
def note_add(request, workflow_id: int):
    if not TidyWorkflow.objects.filter(pk=workflow_id).exists():
        raise Http404(gettext("Workflow %(id)s does not exist.") % {"id": workflow_id})
    form = NoteForm(request.POST)
    if not form.is_valid():
        context = {**notes_context(workflow_id, form), "error": errors_text(form)}
        if request.htmx:
            # htmx does not swap a 4xx answer: the form comes back with its errors at 200.
            return render(request, "notes/_notes.html", context)
        return render(request, "notes/note_error.html", context, status=400)
    try:
        note_create(workflow_id=workflow_id, text=form.cleaned_data["text"], user=request.user)
    except NoteRateLimited as limited:
        return _rate_limited(request, workflow_id, form, limited)
    if request.htmx:
        return render(request, "notes/_notes.html", notes_context(workflow_id))
    response = HttpResponseRedirect(reverse("workflow-detail", args=[workflow_id]) + "#notes")
    response.status_code = 303
    return response


def _rate_limited(request, workflow_id: int, form: NoteForm, limited: NoteRateLimited):
    """429 with what happened and when the next note is possible; nothing was stored. The form keeps
    the text. htmx does not swap a 4xx answer, so an htmx post gets the form with the message at 200."""
    from console.templatetags.console_tags import format_duration

    message = ngettext(
        "You have added %(limit)s note in the last hour, as many as one person may. This note was not saved; "
        "you can add it in %(wait)s.",
        "You have added %(limit)s notes in the last hour, as many as one person may. This note was not saved; "
        "you can add it in %(wait)s.", limited.limit) % {"limit": limited.limit,
                                                          "wait": format_duration(limited.retry_after)}
    form.add_error(None, message)
    context = {**notes_context(workflow_id, form), "error": message}
    if request.htmx:
        return render(request, "notes/_notes.html", context)
    response = render(request, "notes/note_error.html", context, status=429)
    response["Retry-After"] = str(max(1, int(limited.retry_after.total_seconds())))
    return response
