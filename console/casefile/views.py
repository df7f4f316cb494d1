"""The case file of one workflow: JSON for tools, a self-contained printable page for people.
Any console role; an unknown workflow is a 404 (docs/architecture.md §16). Both are paged:
`?after=<cursor>` (a page's `next`) reads on; a cursor that is not one is a 400 naming `after`."""

from csp.constants import NONCE
from csp.decorators import csp_update
from django.http import Http404, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from console.casefile.selectors import Cursor, case_file
from console.input_checks import InputRefused
from console.pages import console_page

# The page carries its own stylesheet so it reads the same when saved or printed. The Content
# Security Policy refuses inline styles: this page's <style> block carries the response's nonce,
# and its policy (enforced or report-only) allows that nonce for styles, nothing more.
_STYLE_NONCE = {"style-src": [NONCE]}


def _after(request) -> Cursor | None:
    """The `after` cursor of the query string (None: the first page), or InputRefused."""
    values = request.GET.getlist("after")
    if not values:
        return None
    if len(values) > 1:
        raise InputRefused("after", _("'after' is given more than once."))
    return Cursor.parse(values[0])


def _case_file_or_404(workflow_id: int, after: Cursor | None, *, printable: bool = False):
    found = case_file(workflow_id=workflow_id, after=after, printable=printable)
    if found is None:
        raise Http404(_("Workflow %(id)s does not exist.") % {"id": workflow_id})
    return found


@require_GET
@console_page
def case_file_json(request, workflow_id: int):
    try:
        after = _after(request)
    except InputRefused as exc:
        return JsonResponse({"error": "bad_request", "field": exc.field, "message": exc.localized}, status=400,
                            json_dumps_params={"ensure_ascii": False})
    response = JsonResponse(_case_file_or_404(workflow_id, after).as_json(), json_dumps_params={"ensure_ascii": False})
    response["Content-Disposition"] = f'inline; filename="workflow-{workflow_id}-case-file.json"'
    return response


@require_GET
@console_page
@csp_update(_STYLE_NONCE)
@csp_update(_STYLE_NONCE, REPORT_ONLY=True)
def case_file_html(request, workflow_id: int):
    try:
        after = _after(request)
    except InputRefused as exc:
        return render(request, "casefile/refused.html", {"workflow_id": workflow_id, "refused": exc}, status=400)
    return render(request, "casefile/case_file.html",
                  {"case": _case_file_or_404(workflow_id, after, printable=True)})
