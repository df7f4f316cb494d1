"""The cordons page (/cordons/): the cordons in force and the recent ones, for every console role;
a shift lead cordons an aisle or a space and lifts a cordon (recovery.cordons is the only writer).
A bad form answers 400 naming the field and records nothing."""

from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy

from console import roles
from console.cordons.forms import CordonForm
from console.cordons.selectors import cordons_page
from console.input_checks import field_errors
from console.messages import plain
from console.pages import console_page, render_page
from recovery.cordons import NO_SUCH_CORDON, CordonRefused, cordon_create, cordon_lift

NOT_SHIFT_LEAD = gettext_lazy("Only a shift lead may cordon a place or lift a cordon.")


def _page(request, form: CordonForm | None = None, *, errors=None, status: int = 200):
    return render_page(request, "console/cordons.html", "cordons-live", {
        "page": cordons_page(now=timezone.now()),
        "form": form or CordonForm(),
        "may_cordon": roles.can_cordon(request.user),
        "errors": errors or [],
    }, status=status)


def _done():
    response = HttpResponseRedirect(reverse("cordons"))
    response.status_code = 303
    return response


@console_page
def cordons(request):
    return _page(request)


@console_page(allowed=roles.can_cordon, refused=NOT_SHIFT_LEAD, post=True)
def cordon_add(request):
    form = CordonForm(request.POST)
    if not form.is_valid():
        return _page(request, form, errors=field_errors(form), status=400)
    data = form.cleaned_data
    try:
        cordon_create(scope=data["scope"], place=data["place"], reason=data["reason"], ends_at=data["ends_at"],
                      username=request.user.get_username())
    except CordonRefused as refused:
        form.add_error(refused.field, plain(refused.message))
        return _page(request, form, errors=field_errors(form), status=400)
    return _done()


@console_page(allowed=roles.can_cordon, refused=NOT_SHIFT_LEAD, post=True)
def cordon_lift_view(request, cordon_id: int):
    try:
        cordon_lift(cordon_id=cordon_id, username=request.user.get_username())
    except CordonRefused as refused:
        status = 404 if refused.message.id == NO_SUCH_CORDON else 409
        return _page(request, errors=[("cordon", plain(refused.message))], status=status)
    return _done()
