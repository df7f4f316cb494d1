"""Template helpers: local times with relative ages, reason-code links, list URLs."""

import html
from datetime import datetime, timedelta
from functools import cache
from urllib.parse import urlencode

from django import template
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from console import roles
from console.reason_codes import CORRECTION_LABELS, reason_code

register = template.Library()


def format_duration(delta: timedelta | None) -> str:
    """A short, human duration: '45 s', '12 min', '3 h 05 min', '2 d 4 h'."""
    if delta is None:
        return "—"
    seconds = int(delta.total_seconds())
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    if seconds < 60:
        return f"{sign}{seconds} s"
    minutes, _ = divmod(seconds, 60)
    if minutes < 60:
        return f"{sign}{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{sign}{hours} h {minutes:02d} min"
    days, hours = divmod(hours, 24)
    return f"{sign}{days} d {hours} h"


@register.filter
def duration(value) -> str:
    """A timedelta, or seconds, as a short duration."""
    if isinstance(value, int | float):
        value = timedelta(seconds=value)
    return format_duration(value)


@register.filter
def age(value: datetime | None) -> str:
    """How long ago `value` was, e.g. '3 h 05 min'."""
    if value is None:
        return "—"
    return format_duration(timezone.now() - value)


@register.filter
def when(value: datetime | None, style: str = "") -> str:
    """<time> with the warehouse-local date and time, and the age: '01 Dec 03:04 (5 min ago)'."""
    if value is None:
        return mark_safe('<span class="muted">never</span>')
    local = timezone.localtime(value)
    full = local.strftime("%Y-%m-%d %H:%M:%S %Z")
    short = local.strftime("%H:%M:%S") if local.date() == timezone.localdate() else local.strftime("%d %b %H:%M")
    if style == "age":
        return format_html('<time datetime="{}" title="{}">{} ago</time>', value.isoformat(), full, age(value))
    return format_html('<time datetime="{}" title="{}">{} <span class="ago">({} ago)</span></time>',
                       value.isoformat(), full, short, age(value))


@cache
def _catalog_url() -> str:
    return reverse("reason-codes")


@register.filter
def reason_link(code: str | None):
    """A pause reason linked to its entry in the reason-code catalog."""
    if not code:
        return mark_safe('<span class="muted">none</span>')
    entry = reason_code(code)
    url = f"{_catalog_url()}#{code}"
    title = entry.title if entry else "Not in the catalog"
    return format_html('<a class="reason" href="{}" title="{}"><code>{}</code></a>', url, title, code)


@register.filter
def correction_label(value) -> str:
    return CORRECTION_LABELS.get(value, str(value))


@register.simple_tag
def paused_url(filters, **changes) -> str:
    """The paused list's URL for `filters` with `changes` (a cursor's `after`/`before` included)."""
    position = {k: v for k, v in changes.items() if k in {"after", "before"} and v}
    params = filters.params(**{k: v for k, v in changes.items() if k not in {"after", "before"}})
    params.update(position)
    query = urlencode(params)
    return reverse("paused-workflows") + (f"?{query}" if query else "")


@register.simple_tag
def batch_recheck_url(filters) -> str:
    """The batch re-check page for the workflows these paused-list filters select."""
    query = urlencode({k: v for k, v in filters.params().items() if k in {"reason", "origin", "age", "q"}})
    return reverse("repair-batch") + (f"?{query}" if query else "")


@register.filter
def may_repair(user) -> bool:
    return roles.can_repair(user)


@register.filter
def get(mapping, key):
    return mapping.get(key) if mapping else None


@cache
def _workflow_url_prefix() -> str:
    url = reverse("workflow-detail", args=[0])
    return url[: -len("0/")]


@cache
def _locks_url() -> str:
    return reverse("locks")


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _when_fast(value: datetime, now: datetime, today) -> str:
    """`when` for many rows at once: the same markup, without per-call lookups."""
    local = timezone.localtime(value)
    full = local.strftime("%Y-%m-%d %H:%M:%S %Z")
    short = local.strftime("%H:%M:%S") if local.date() == today else local.strftime("%d %b %H:%M")
    return (f'<time datetime="{value.isoformat()}" title="{full}">{short} '
            f'<span class="ago">({format_duration(now - value)} ago)</span></time>')


@register.simple_tag
def paused_rows(rows):
    """The paused list's table rows. Rendered here rather than in a template loop: the list
    fragment is refreshed every few seconds and the template engine spent most of its time on
    these 50 rows (bench/console.py). Every value is escaped with html.escape."""
    prefix, locks, catalog = _workflow_url_prefix(), _locks_url(), _catalog_url()
    now, today = timezone.now(), timezone.localdate()
    out = []
    for row in rows:
        wid = int(row.workflow_id)
        if row.step_no:
            step = (f"step {int(row.step_no)}: tray <code>{_e(row.tray_code)}</code> "
                    f"<code>{_e(row.cargo_space_id)}</code> → <code>{_e(row.target_cargo_space_id)}</code>")
        else:
            step = '<span class="muted">all steps completed</span>'
        kept = f'<a href="{locks}?q={wid}">{int(row.lock_count)}</a>' if row.lock_count else "0"
        if row.pause_reason:
            entry = reason_code(row.pause_reason)
            code = _e(row.pause_reason)
            title = _e(entry.title) if entry else "Not in the catalog"
            reason = f'<a class="reason" href="{catalog}#{code}" title="{title}"><code>{code}</code></a>'
        else:
            reason = '<span class="muted">none</span>'
        out.append(
            f'<tr>\n'
            f'  <td data-label="Workflow"><a class="wf" href="{prefix}{wid}/">#{wid}</a></td>\n'
            f'  <td data-label="Reason">{reason}</td>\n'
            f'  <td data-label="Paused since">{_when_fast(row.paused_since, now, today)}</td>\n'
            f'  <td data-label="Origin">{_e((row.origin or "").title())}</td>\n'
            f'  <td data-label="Paused step">{step}</td>\n'
            f'  <td data-label="Locks kept" class="num">{kept}</td>\n'
            f'</tr>\n'
        )
    return mark_safe("".join(out))  # noqa: S308 - every value above is escaped or an int
