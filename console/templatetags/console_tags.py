"""Template helpers: local times with relative ages, reason-code links, list URLs.

Ages, durations, dates and numbers are written in the request's language: units through
ngettext with placeholders, month names and number formats through django.utils.formats.
"""

import html
from datetime import datetime, timedelta
from functools import cache, lru_cache
from urllib.parse import urlencode

from django import template
from django.urls import reverse
from django.utils import dateformat, formats, timezone
from django.utils.html import format_html
from django.utils.safestring import mark_safe
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


@cache
def _locks_url() -> str:
    return reverse("locks")


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _when_fast(value: datetime, now: datetime, today, zone, language: str) -> str:
    """`when` for many rows at once: the same markup, with the request's time zone and language
    looked up once by the caller."""
    local = timezone.localtime(value, zone)
    full = local.strftime("%Y-%m-%d %H:%M:%S %Z")
    ago = _e(format_ago_aside(now - value, language))
    return (f'<time datetime="{value.isoformat()}" title="{full}">{_e(_short_date(local, today, language))} '
            f'<span class="ago">{ago}</span></time>')


@register.simple_tag
def paused_rows(rows):
    """The paused list's table rows. Rendered here rather than in a template loop: the list
    fragment is refreshed every few seconds and the template engine spent most of its time on
    these 50 rows (bench/console.py). Every value is escaped with html.escape."""
    prefix, locks, catalog = _workflow_url_prefix(), _locks_url(), _catalog_url()
    now, today = timezone.now(), timezone.localdate()
    zone, language = timezone.get_current_timezone(), get_language()
    origins: dict[str, str] = {}  # each origin's label and each reason's title, looked up once
    titles: dict[str, str] = {}
    # The labels a phone shows beside each cell (console.css), and the texts of the cells.
    labels = {key: _e(text) for key, text in (
        ("workflow", gettext("Workflow")), ("reason", gettext("Reason")), ("since", gettext("Paused since")),
        ("origin", gettext("Origin")), ("step", gettext("Paused step")), ("locks", gettext("Locks kept")))}
    step_text = gettext("step %(step)s: tray %(tray)s %(source)s → %(target)s")
    all_done = _e(gettext("all steps completed"))
    not_in_catalog = _e(gettext("Not in the catalog"))
    no_reason = _e(pgettext("reason", "none"))
    out = []
    for row in rows:
        wid = int(row.workflow_id)
        if row.step_no:
            step = _e(step_text) % {"step": int(row.step_no), "tray": f"<code>{_e(row.tray_code)}</code>",
                                    "source": f"<code>{_e(row.cargo_space_id)}</code>",
                                    "target": f"<code>{_e(row.target_cargo_space_id)}</code>"}
        else:
            step = f'<span class="muted">{all_done}</span>'
        kept = f'<a href="{locks}?q={wid}">{int(row.lock_count)}</a>' if row.lock_count else "0"
        if row.pause_reason:
            code = _e(row.pause_reason)
            title = titles.get(code)
            if title is None:
                entry = reason_code(row.pause_reason)
                title = titles[code] = _e(entry.title) if entry else not_in_catalog
            reason = f'<a class="reason" href="{catalog}#{code}" title="{title}"><code>{code}</code></a>'
        else:
            reason = f'<span class="muted">{no_reason}</span>'
        origin = origins.get(row.origin)
        if origin is None:
            origin = origins[row.origin] = _e(origin_label(row.origin))
        out.append(
            f'<tr>\n'
            f'  <td data-label="{labels["workflow"]}"><a class="wf" href="{prefix}{wid}/">#{wid}</a></td>\n'
            f'  <td data-label="{labels["reason"]}">{reason}</td>\n'
            f'  <td data-label="{labels["since"]}">{_when_fast(row.paused_since, now, today, zone, language)}</td>\n'
            f'  <td data-label="{labels["origin"]}">{origin}</td>\n'
            f'  <td data-label="{labels["step"]}">{step}</td>\n'
            f'  <td data-label="{labels["locks"]}" class="num">{kept}</td>\n'
            f'</tr>\n'
        )
    return mark_safe("".join(out))  # noqa: S308 - every value above is escaped or an int


@register.simple_tag
def evidence_tables(card):
    """An evidence card's tables, one per section, field by field. Rendered here rather than in
    a template loop: the workflow page shows two cards of about thirty fields and the template
    engine spent a third of the page's time on them (bench/console.py). Every value is escaped
    with html.escape; the markup is the one console/_evidence_card.html describes."""
    # Each text is looked up outside the f-strings below: makemessages does not read inside them.
    field, expected, observed = _e(gettext("Field")), _e(gettext("Expected (from the step)")), _e(gettext("Observed"))
    mismatch, changed = _e(gettext("Mismatch:")), _e(gettext("changed"))
    produced, rule_word = _e(gettext("Produced this decision")), _e(gettext("rule"))
    heads = (f'<thead><tr><th scope="col">{field}</th><th scope="col">{expected}</th>'
             f'<th scope="col">{observed}</th></tr></thead>')
    flag = f'<span class="flag" aria-hidden="true">✗</span> <span class="visually-hidden">{mismatch} </span>'
    okmark = '<span class="okmark" aria-hidden="true">✓</span> '
    changed_badge = f'\n          <span class="badge changed-badge">{changed}</span>'
    produced = f'<strong>{produced}</strong> — '
    out = []
    for section in card.sections:
        out.append(f'<div class="table-wrap">\n<table class="evidence-table">\n'
                   f'  <caption>{_e(section.title)} <code class="table-name">{_e(section.table)}</code></caption>\n'
                   f'  {heads}\n  <tbody>\n')
        for f in section.fields:
            classes = f"check-{_e(f.check)}" + (" decisive" if f.decisive else "") + (" changed" if f.changed else "")
            mark = flag if f.mismatch else okmark if f.check == "ok" else ""
            why = ""
            if f.mismatch:
                why = (f'\n          <div class="why">{produced if f.decisive else ""}{rule_word} '
                       f'<code>{_e(f.rule)}</code>: {_e(f.rule_explanation)}</div>')
            out.append(
                f'    <tr class="{classes}" data-field="{_e(f.key)}">\n'
                f'      <th scope="row">{_e(f.label)}</th>\n'
                f'      <td>{_e(f.expected)}</td>\n'
                f'      <td>\n          {mark}<strong>{_e(f.observed)}</strong>'
                f'{changed_badge if f.changed else ""}{why}\n      </td>\n    </tr>\n')
        out.append("  </tbody>\n</table>\n</div>\n")
    return mark_safe("".join(out))  # noqa: S308 - every value above is escaped


@register.simple_tag
def message(stored, fallback=""):
    """A stored message (recovery.messages.Message as JSON) in the reader's language, as HTML;
    `fallback` (the stored English) for a row written before messages were stored."""
    return messages.shown(stored, fallback)
