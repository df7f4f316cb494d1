"""Template helpers: local times with relative ages, reason-code links, list URLs, the paused
list's row values, and the tags that write table rows through their template partials.

Markup lives in templates, escaped by Django's autoescape: these helpers format values (a time's
text, an age, a URL) and build at most a tiny inline element with format_html (`when`'s <time>,
`reason_link`'s link). Ages, durations, dates and numbers are written in the request's language:
units through ngettext with placeholders, month names and number formats through
django.utils.formats.
"""

from datetime import datetime, timedelta
from functools import cache, lru_cache
from typing import NamedTuple
from urllib.parse import urlencode

from django import template
from django.dispatch import receiver
from django.template.loader import get_template
from django.urls import reverse
from django.utils import dateformat, formats, timezone
from django.utils.autoreload import file_changed
from django.utils.html import format_html
from django.utils.translation import get_language, gettext, ngettext, pgettext, pgettext_lazy

from console import messages, roles
from console.runbook import reason_code

register = template.Library()


@register.filter
def number(value) -> str:
    """An integer or decimal in the language's number format, grouped: '12,345' in English."""
    if value is None or value == "":
        return "—"
    return formats.number_format(value, use_l10n=True, force_grouping=True)


def format_duration(delta: timedelta | None) -> str:
    """A short, human duration: '45 s', '12 min', '3 h 05 min', '2 d 4 h' (in the language)."""
    return _duration_text(get_language(), _duration_parts(delta))


def format_ago(delta: timedelta | None) -> str:
    """How long ago, in the language: '5 min ago'."""
    return _ago_text(get_language(), _duration_parts(delta))


def format_ago_aside(delta: timedelta | None, language: str | None = None) -> str:
    """How long ago, as an aside after a time: '(5 min ago)'."""
    return _ago_aside_text(language or get_language(), _duration_parts(delta))


def _duration_parts(delta: timedelta | None) -> tuple[bool, str, int, int] | None:
    """What a duration's text shows: (negative, unit, count, the next unit's count)."""
    if delta is None:
        return None
    seconds = int(delta.total_seconds())
    negative, seconds = seconds < 0, abs(seconds)
    if seconds < 60:
        return negative, "s", seconds, 0
    minutes = seconds // 60
    if minutes < 60:
        return negative, "min", minutes, 0
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return negative, "h", hours, minutes
    days, hours = divmod(hours, 24)
    return negative, "d", days, hours


# The texts below are cached by language and value: the paused list writes fifty times and ages
# and is refreshed every few seconds, and each translation lookup asks for the request's language
# again (bench/console.py). `language` is the active language, in the key so that each language
# keeps its own texts.


@lru_cache(maxsize=4096)
def _duration_text(language: str, parts: tuple[bool, str, int, int] | None) -> str:
    if parts is None:
        return "—"
    negative, unit, count, rest = parts
    sign = "-" if negative else ""
    if unit == "s":
        return sign + ngettext("%(seconds)s s", "%(seconds)s s", count) % {"seconds": count}
    if unit == "min":
        return sign + ngettext("%(minutes)s min", "%(minutes)s min", count) % {"minutes": count}
    if unit == "h":
        # Minutes keep two digits beside hours: '3 h 05 min'.
        return sign + ngettext("%(hours)s h %(minutes)s min", "%(hours)s h %(minutes)s min", count) % {
            "hours": count, "minutes": f"{rest:02d}"}
    return sign + ngettext("%(days)s d %(hours)s h", "%(days)s d %(hours)s h", count) % {
        "days": number(count), "hours": rest}


@lru_cache(maxsize=4096)
def _ago_text(language: str, parts: tuple[bool, str, int, int] | None) -> str:
    return gettext("%(age)s ago") % {"age": _duration_text(language, parts)}


@lru_cache(maxsize=4096)
def _ago_aside_text(language: str, parts: tuple[bool, str, int, int] | None) -> str:
    return gettext("(%(age)s ago)") % {"age": _duration_text(language, parts)}


def _short_date(local: datetime, today, language: str | None = None) -> str:
    """The time alone for today, else the day and time with the language's month name."""
    if local.date() == today:
        return local.strftime("%H:%M:%S")
    return _other_day_text(language or get_language(), local, local.tzinfo)


@lru_cache(maxsize=4096)
def _other_day_text(language: str, local: datetime, zone) -> str:
    # `zone` is in the key because equal instants in two time zones compare equal.
    # Translators: a date format of django.utils.dateformat (d day, M month name, n month number,
    # j day without zero, H:i time) for a time on another day than today: '01 Dec 03:04'.
    return dateformat.format(local, pgettext("date format", "d M H:i"))


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


def _never() -> str:
    return format_html('<span class="muted">{}</span>', pgettext("time", "never"))


def _time_tag(value: datetime, local: datetime, text: str, aside: str | None = None) -> str:
    """<time> with the instant (ISO 8601), the full local time as its title, `text` shown, and
    `aside` (an age, the time still to go) beside it."""
    full = local.strftime("%Y-%m-%d %H:%M:%S %Z")
    if aside is None:
        return format_html('<time datetime="{}" title="{}">{}</time>', value.isoformat(), full, text)
    return format_html('<time datetime="{}" title="{}">{} <span class="ago">{}</span></time>',
                       value.isoformat(), full, text, aside)


@register.filter
def when(value: datetime | None, style: str = "") -> str:
    """<time> with the warehouse-local date and time, and the age: '01 Dec 03:04 (5 min ago)'."""
    if value is None:
        return _never()
    local = timezone.localtime(value)
    delta = timezone.now() - value
    if style == "age":
        return _time_tag(value, local, format_ago(delta))
    return _time_tag(value, local, _short_date(local, timezone.localdate()), format_ago_aside(delta))


@register.filter
def when_ahead(value: datetime | None) -> str:
    """A moment still ahead (a cordon's end): '01 Dec 23:10 (in 5 h 59 min)'; once passed, as `when`."""
    ahead = None if value is None else value - timezone.now()
    if ahead is None or ahead <= timedelta(0):
        return when(value)
    local = timezone.localtime(value)
    return _time_tag(value, local, _short_date(local, timezone.localdate()),
                     gettext("(in %(duration)s)") % {"duration": format_duration(ahead)})


@register.filter
def clock(value: datetime | None) -> str:
    """<time> with the warehouse-local date and time and no age: for a time that may lie ahead
    (a silence's end), where "5 min ago" would be wrong."""
    if value is None:
        return _never()
    local = timezone.localtime(value)
    return _time_tag(value, local, _short_date(local, timezone.localdate()))


@register.filter
def milliseconds(value) -> str:
    """A duration in milliseconds, e.g. '1,250 ms'."""
    if value is None or value == "":  # no cycle yet: the template gives an empty value
        return "—"
    return ngettext("%(ms)s ms", "%(ms)s ms", int(value)) % {"ms": number(value)}


ORIGIN_LABELS = {"AUTOMATIC": pgettext_lazy("origin", "Automatic"), "MANUAL": pgettext_lazy("origin", "Manual")}


@register.filter
def origin_label(value) -> str:
    """A workflow's origin as people read it: 'Automatic', 'Manual'."""
    return str(ORIGIN_LABELS.get(value, (value or "").title()))


@register.filter
def yesno_text(value) -> str:
    """Yes or no, in the language."""
    return gettext("yes") if value else gettext("no")


# The console's roles as people read them (console.roles names the groups in English).
ROLE_LABELS = {
    roles.SUPERVISOR: pgettext_lazy("role", "supervisor"),
    roles.OPERATOR: pgettext_lazy("role", "operator"),
    roles.SHIFT_LEAD: pgettext_lazy("role", "shift lead"),
    "admin": pgettext_lazy("role", "admin"),
}


@register.filter
def role_labels(names) -> str:
    """Role names, comma-separated, in the language: 'operator, shift lead'."""
    return gettext(", ").join(str(ROLE_LABELS.get(name, name)) for name in names)


@cache
def _catalog_url() -> str:
    return reverse("reason-codes")


@register.filter
def guide_section_url(code: str | None) -> str:
    """The user guide's section for a pause reason in the console (/help/#recovery_job_missing): the
    guides write a heading `### RECOVERY_JOB_MISSING` for each one, whose anchor on a Git host and in
    /help/ is the code in lower case (console.help.guides.github_slug); '' without a reason."""
    return f"{reverse('help')}#{code.lower()}" if code else ""


@register.filter
def reason_link(code: str | None):
    """A pause reason linked to its entry in the reason-code catalog."""
    if not code:
        return format_html('<span class="muted">{}</span>', pgettext("reason", "none"))
    entry = reason_code(code)
    url = f"{_catalog_url()}#{code}"
    title = entry.title if entry else gettext("Not in the catalog")
    return format_html('<a class="reason" href="{}" title="{}"><code>{}</code></a>', url, title, code)


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
    query = urlencode({k: v for k, v in filters.params().items() if k in {"reason", "origin", "age", "q", "aisle"}})
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


class PausedRowValues(NamedTuple):
    """The values of one paused-list row, formatted for the request's language and time zone.
    Texts, not markup: workflows/paused_list.html#paused-row writes and escapes them."""

    workflow_id: str
    url: str  # the workflow's page
    reason: str  # the pause reason code, "" for none
    reason_url: str  # its entry in the reason-code catalog
    reason_title: str
    since_iso: str  # when it paused: the instant (ISO 8601), the full local time, the short
    since_full: str  # time shown and the age beside it
    since_text: str
    since_ago: str
    origin: str
    step_no: str  # the paused step, "" when every step is completed
    tray_code: str
    cargo_space_id: str
    target_cargo_space_id: str
    locks: str  # how many locks it keeps
    locks_url: str  # the locks page searching for it, "" when it keeps none


@register.simple_tag
def paused_row_values(rows) -> list[PausedRowValues]:
    """The paused list's rows (console.readers.paused.PausedRow) as the texts its table shows.
    The list is refreshed every few seconds: the language, the time zone, the clock, the URLs,
    each origin's label and each reason's title are looked up once for all rows, not per row
    (bench/console.py times the fragment)."""
    prefix, locks, catalog = _workflow_url_prefix(), _locks_url(), _catalog_url()
    now, today = timezone.now(), timezone.localdate()
    zone, language = timezone.get_current_timezone(), get_language()
    origins: dict[str, str] = {}
    titles: dict[str, str] = {}
    not_in_catalog = gettext("Not in the catalog")
    shown = []
    for row in rows:
        wid = str(int(row.workflow_id))
        title = ""
        if row.pause_reason:
            title = titles.get(row.pause_reason)
            if title is None:
                entry = reason_code(row.pause_reason)
                title = titles[row.pause_reason] = str(entry.title) if entry else not_in_catalog
        origin = origins.get(row.origin)
        if origin is None:
            origin = origins[row.origin] = origin_label(row.origin)
        local = timezone.localtime(row.paused_since, zone)
        shown.append(PausedRowValues(
            workflow_id=wid, url=f"{prefix}{wid}/",
            reason=row.pause_reason or "", reason_url=f"{catalog}#{row.pause_reason}", reason_title=title,
            since_iso=row.paused_since.isoformat(), since_full=local.strftime("%Y-%m-%d %H:%M:%S %Z"),
            since_text=_short_date(local, today, language),
            since_ago=format_ago_aside(now - row.paused_since, language),
            origin=origin,
            step_no=str(int(row.step_no)) if row.step_no else "", tray_code=row.tray_code or "",
            cargo_space_id=row.cargo_space_id or "", target_cargo_space_id=row.target_cargo_space_id or "",
            locks=str(int(row.lock_count)), locks_url=f"{locks}?q={wid}" if row.lock_count else ""))
    return shown


# Table rows are written by their partials once per language and set of values, then reused
# (`_written`): the paused list is refreshed every few seconds by every open page and shows the
# same rows again, whose texts change at most once a minute (their age); a workflow's live
# fragment writes the same evidence card every few seconds, and cards share many fields
# (statuses, presences, counts). Writing fifty rows through the template engine on every
# refresh took about 4 ms, half the paused-list fragment's rendering (bench/console.py).


@register.simple_tag
def paused_row(row: PausedRowValues) -> str:
    """One row of the paused list, written by workflows/paused_list.html#paused-row."""
    return _written("workflows/paused_list.html#paused-row", get_language(), row)


@register.simple_tag
def evidence_row(field) -> str:
    """One field of an evidence card (console.workflows.evidence_card.CardField), written by
    workflows/_evidence_card.html#evidence-row."""
    return _written("workflows/_evidence_card.html#evidence-row", get_language(), field)


@lru_cache(maxsize=4096)
def _written(partial: str, language: str | None, row) -> str:
    # `row` is immutable (a named tuple, a frozen dataclass) and holds every value the partial
    # shows; `language` is in the key because the partial's own words are in that language.
    return get_template(partial).render({"row": row})


@receiver(file_changed)
def _forget_written_rows(sender, file_path, **kwargs) -> None:
    """The development server keeps running when a template changes: write the rows again."""
    _written.cache_clear()


@cache
def _locks_url() -> str:
    return reverse("locks")


@register.simple_tag
def message(stored, fallback=""):
    """A stored message (recovery.messages.Message as JSON) in the reader's language, as HTML;
    `fallback` (the stored English) for a row written before messages were stored."""
    return messages.shown(stored, fallback)
