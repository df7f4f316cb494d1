"""The cordons page (/cordons/): the cordons in force and the recent ones, for every console role;
a shift lead cordons an aisle or a space and lifts a cordon (recovery.engine.cordons is the only writer).
A bad form answers 400 naming the field and records nothing."""

from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy, ngettext

from console import roles
from console.cordons.forms import CordonForm
from console.cordons.selectors import cordons_page
from console.cordons.services import cordon_add as cordon_add_service
from console.input_checks import field_errors
from console.messages import plain
from console.pages import PositionForm, console_page, render_page
from console.rate_limits import RateLimited
from recovery.engine.cordons import NO_SUCH_CORDON, CordonRefused, cordon_lift

NOT_SHIFT_LEAD = gettext_lazy("Only a shift lead may cordon a place or lift a cordon.")


def _page(request, form: CordonForm | None = None, *, errors=None, status: int = 200, position=(None, None),
          query: str = ""):
    after, before = position
    return render_page(request, "cordons/cordons.html", "cordons-live", {
        "page": cordons_page(now=timezone.now(), after=after, before=before),
        "form": form or CordonForm(),
        "may_cordon": roles.can_cordon(request.user),
        "errors": errors or [],
        "query": query,  # the list position the live refresh keeps
    }, status=status)


def _done():
    response = HttpResponseRedirect(reverse("cordons"))
    response.status_code = 303
    return response


@console_page
def cordons(request):
    position = PositionForm(request.GET)
    if not position.is_valid():  # hostile: 400 naming the field; a malformed position: the first page
        return _page(request, errors=field_errors(position), status=400 if position.refused else 200)
    return _page(request, position=position.position(), query=position.query())


@console_page(allowed=roles.can_cordon, refused=NOT_SHIFT_LEAD, post=True)
def cordon_add(request):
    form = CordonForm(request.POST)
    if not form.is_valid():
        return _page(request, form, errors=field_errors(form), status=400)
    data = form.cleaned_data
    try:
        cordon_add_service(user=request.user, scope=data["scope"], place=data["place"], reason=data["reason"],
                           ends_at=data["ends_at"])
    except CordonRefused as refused:
        form.add_error(refused.field, plain(refused.message))
        return _page(request, form, errors=field_errors(form), status=400)
    except RateLimited as limited:
        return _rate_limited(request, form, limited)
    return _done()


def _rate_limited(request, form: CordonForm, limited: RateLimited):
    """429 with when the next cordon is possible; nothing was stored and the form keeps its values."""
    from console.templatetags.console_tags import format_duration

    message = ngettext(
        "You have created %(limit)s cordon in the last hour, as many as one person may. Nothing was recorded; "
        "you can cordon again in %(wait)s.",
        "You have created %(limit)s cordons in the last hour, as many as one person may. Nothing was recorded; "
        "you can cordon again in %(wait)s.", limited.limit) % {"limit": limited.limit,
                                                              "wait": format_duration(limited.retry_after)}
    response = _page(request, form, errors=[("cordon", message)], status=429)
    response["Retry-After"] = str(max(1, int(limited.retry_after.total_seconds())))
    return response


@console_page(allowed=roles.can_cordon, refused=NOT_SHIFT_LEAD, post=True)
def cordon_lift_view(request, cordon_id: int):
    try:
        cordon_lift(cordon_id=cordon_id, username=request.user.get_username())
    except CordonRefused as refused:
        status = 404 if refused.message.id == NO_SUCH_CORDON else 409
        return _page(request, errors=[("cordon", plain(refused.message))], status=status)
    return _done()
