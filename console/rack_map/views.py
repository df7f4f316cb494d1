"""The rack map page (/map/): the map of every aisle, or its table view, filtered by aisle and
state. A bad filter value answers 400 naming the field; nothing is ever changed here."""

from collections import Counter
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.utils.translation import gettext, gettext_lazy

from console.pages import console_page, render_page
from console.rack_map.drawing import STATES, RackMap, code_index, rack_map, render_aisle, render_table
from recovery.engine.gc_pause import cyclic_gc_paused

VIEWS = {"map": gettext_lazy("Map"), "table": gettext_lazy("Table")}


class RackMapForm(forms.Form):
    aisle = forms.CharField(required=False, max_length=40, strip=True, label=gettext_lazy("Aisle"))
    state = forms.ChoiceField(required=False, label=gettext_lazy("State"),
                              choices=[("", gettext_lazy("Any state"))] + list(STATES.items()))
    view = forms.ChoiceField(required=False, label=gettext_lazy("View"), choices=list(VIEWS.items()))


@console_page
def rack_map_page(request):
    # Reading, drawing and rendering 20,000 spaces allocates 20,000 row tuples without cycles.
    with cyclic_gc_paused():
        return _rack_map_page(request)


def _rack_map_page(request):
    form = RackMapForm(request.GET)
    valid = form.is_valid()
    data = form.cleaned_data if valid else {}
    aisle, state, view = data.get("aisle") or "", data.get("state") or "", data.get("view") or "map"
    names = code_index(settings.SPACE_CODE_PATTERN).names if aisle or not valid else None
    if valid and aisle and aisle not in names:
        form.add_error("aisle", gettext("There is no aisle %(aisle)s on the map.") % {"aisle": aisle})
        valid = False
    if valid:
        rack = rack_map(aisle=aisle, state=state)
        svgs = [(a, render_aisle(a, state=state)) for a in rack.aisles] if view == "map" else []
    else:  # nothing drawn: the form with its error, and the aisles to choose from
        rack = RackMap(aisles=[], aisle_names=names, unmatched=[], crossing=[], counts=Counter(), total=0)
        svgs = []
    filters = {k: v for k, v in (("aisle", aisle), ("state", state)) if v}
    context = {
        "form": form, "rack": rack, "view": view, "states": STATES,
        "svgs": svgs,
        "table_rows": render_table(rack) if view == "table" else "",
        "map_query": urlencode(filters), "table_query": urlencode({**filters, "view": "table"}),
        "errors": [(name, form.fields[name].label, message) for name, messages in form.errors.items()
                   for message in messages] if not valid else [],
    }
    response = render_page(request, "rack_map/rack_map.html", "rack-results", context)
    if not valid:
        response.status_code = 400
    return response
