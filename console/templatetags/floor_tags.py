"""Template helpers of the floor pages: `{% load floor_tags %}`. `active_url` builds the active
list's URLs like `paused_url` does for the paused list."""

from urllib.parse import urlencode

from django import template
from django.urls import reverse

from console import roles

register = template.Library()


@register.simple_tag
def active_url(filters, **changes) -> str:
    position = {k: v for k, v in changes.items() if k in {"after", "before"} and v}
    params = filters.params(**{k: v for k, v in changes.items() if k not in {"after", "before"}})
    params.update(position)
    query = urlencode(params)
    return reverse("active-workflows") + (f"?{query}" if query else "")


@register.filter
def may_view(user) -> bool:
    """Signed in with a console role: the navigation and the search box are offered."""
    return roles.can_view(user)


@register.filter
def may_read_analytics(user) -> bool:
    """A shift lead: the analytics are offered (from the handover and the notifications)."""
    return roles.can_read_analytics(user)


@register.simple_tag
def shift_url(shift, fmt: str = "", section: str = "", page: int = 1) -> str:
    params = {"shift": shift.param}
    if fmt:
        params["format"] = fmt
    if section:
        params["section"] = section
        if page > 1:
            params["page"] = page
    return reverse("handover") + "?" + urlencode(params)


@register.filter
def may_cancel(user) -> bool:
    """Shift leads decide cancel proposals: only they are offered the link to one."""
    return roles.can_cancel(user)
