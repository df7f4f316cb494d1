"""Notification pages: the list with acknowledgement, the thresholds shift leads set, and silences."""

from urllib.parse import parse_qs, urlsplit

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from console import roles
from console.input_checks import BIGINT_MAX, field_errors
from console.models import Notification, Silence
from console.notifications import selectors, services
from console.notifications.events import Event
from console.notifications.forms import NotificationFilterForm, SilenceForm, ThresholdsForm
from console.notifications.messages import with_texts
from console.pages import PositionForm, console_page, render_page
from console.rate_limits import RateLimited


def can_set_thresholds(user) -> bool:
    return user.is_authenticated and (user.is_superuser or roles.SHIFT_LEAD in roles.user_roles(user))


can_silence = can_set_thresholds  # shift leads (and superusers), like the thresholds


@console_page
def notifications(request):
    form = NotificationFilterForm(request.GET)
    valid = form.is_valid()
    data = form.cleaned_data if valid else {}
    page = selectors.notifications_page(state=data.get("state", ""), event=data.get("event", ""))
    response = render_page(request, "notifications/list.html", "notifications-results", {
        "form": form, "page": page, "filters": data, "escalate_after": settings.ESCALATE_AFTER_MINUTES,
    })
    if not valid:
        response.status_code = 400
    return response


@console_page(post=True)
def acknowledge(request, pk: int):
    if pk > BIGINT_MAX:  # bigint: a larger id in the URL is a 404, not a database error
        raise Http404(_("No such notification."))
    error = ""
    try:
        services.notification_acknowledge(notification_id=pk, user=request.user)
    except services.NotificationError as exc:
        error = str(exc)
    n = Notification.objects.select_related("acknowledgement", "silenced_by").filter(pk=pk).first()
    if request.htmx and n is not None:
        # The row re-rendered in place (200 even when refused: htmx swaps only 2xx answers).
        # The open/acknowledged/resolved counts follow out of band, for the page's event filter.
        event = parse_qs(urlsplit(request.htmx.current_url or "").query).get("event", [""])[0]
        page = {"state_counts": selectors.state_counts(event=event if event in Event.values else "")}
        return render(request, "notifications/_acknowledged.html", {"n": with_texts([n])[0], "error": error,
                                                                     "page": page})
    if error:
        return render(request, "notifications/refused.html", {"error": error, "n": n},
                      status=404 if n is None else 409)
    back = request.POST.get("next", "")
    safe = all(ch.isprintable() for ch in back) and url_has_allowed_host_and_scheme(
        back, allowed_hosts={request.get_host()}, require_https=request.is_secure())
    if not safe:
        back = reverse("notifications")
    return HttpResponseRedirect(back, status=303)


@console_page(form=True)
def thresholds(request):
    rows = selectors.threshold_rows()
    codes = [r.reason_code for r in rows]
    current = {r.reason_code: r.minutes for r in rows}
    may_edit = can_set_thresholds(request.user)
    status, saved = 200, None
    if request.method == "POST":
        if not may_edit:
            raise PermissionDenied(_("Only shift leads set the notification thresholds."))
        form = ThresholdsForm(request.POST, codes=codes, initial_minutes=current)
        if form.is_valid():
            saved = services.thresholds_update(values=form.minutes(), user=request.user,
                                               default=selectors.default_paused_threshold())
            rows = selectors.threshold_rows()
            form = ThresholdsForm(codes=codes, initial_minutes={r.reason_code: r.minutes for r in rows})
        else:
            status = 400
    else:
        form = ThresholdsForm(codes=codes, initial_minutes=current)
    return render(request, "notifications/thresholds.html", {
        "form": form, "rows": rows, "may_edit": may_edit, "saved": saved,
        "default": selectors.default_paused_threshold(), "settings_thresholds": selectors.setting_thresholds(),
        "user_roles": sorted(roles.user_roles(request.user)),
    }, status=status)


SILENCE_FIELDS = ("event", "reason", "aisle", "starts_at", "ends_at", "comment")


@console_page(form=True)
def silences(request):
    """Every role reads the silences; shift leads create them (a bad value: 400 naming the field,
    nothing stored)."""
    may_edit = can_silence(request.user)
    status, retry_after, position = 200, None, PositionForm(request.GET)
    if request.method == "POST":
        if not may_edit:
            raise PermissionDenied(_("Only shift leads silence notifications."))
        form = SilenceForm(request.POST)
        status = 400
        if form.is_valid():
            try:
                values = {k: form.cleaned_data[k] for k in SILENCE_FIELDS}
                created = services.silence_create(user=request.user, **values)
            except services.NotificationError as exc:
                form.add_error(None, str(exc))
            except RateLimited as limited:
                form.add_error(None, _silences_limited(limited))
                status, retry_after = 429, max(1, int(limited.retry_after.total_seconds()))
            else:
                return HttpResponseRedirect(f"{reverse('notification-silences')}?created={created.pk}", status=303)
    else:
        form = SilenceForm()
        if not position.is_valid() and position.refused:  # a hostile list position: 400 naming the field
            status = 400
    after, before = position.position()
    created = request.GET.get("created", "")
    response = render_page(request, "notifications/silences.html", "silences-list", {
        "form": form, "page": selectors.silences_page(after=after, before=before), "may_edit": may_edit,
        "created": int(created) if created.isascii() and created.isdigit() and len(created) < 19 else None,
        "query": position.query() if position.is_valid() else "",
        "list_errors": field_errors(position) if not position.is_valid() else [],
    }, status=status)
    if retry_after:
        response["Retry-After"] = str(retry_after)
    return response


def _silences_limited(limited: RateLimited) -> str:
    from console.templatetags.console_tags import format_duration

    return ngettext(
        "You have created %(limit)s silence in the last hour, as many as one person may. Nothing was recorded; "
        "you can create one again in %(wait)s.",
        "You have created %(limit)s silences in the last hour, as many as one person may. Nothing was recorded; "
        "you can create one again in %(wait)s.", limited.limit) % {"limit": limited.limit,
                                                                   "wait": format_duration(limited.retry_after)}


@console_page(post=True)
def silence_end(request, pk: int):
    if not can_silence(request.user):
        raise PermissionDenied(_("Only shift leads end silences."))
    if pk > BIGINT_MAX:
        raise Http404(_("No such silence."))
    try:
        services.silence_end(silence_id=pk, user=request.user)
    except services.NotificationError as exc:
        status = 404 if not Silence.objects.filter(pk=pk).exists() else 409
        return render(request, "notifications/silence_refused.html", {"error": str(exc)}, status=status)
    return HttpResponseRedirect(f"{reverse('notification-silences')}?ended={pk}", status=303)


# --- chat channels -------------------------------------------------------------------------------

CHANNELS_REFUSED = gettext_lazy("Only shift leads see the chat channels and send test messages.")


@console_page(allowed=can_set_thresholds, refused=CHANNELS_REFUSED)
def channels(request):
    """Each chat channel's state for shift leads: kind, filters, host (never the URL or secret),
    last success, last failure with the vendor's code, messages waiting, the latest test message."""
    tested = request.GET.get("tested", "")
    return render_page(request, "notifications/channels.html", "channels-list", {
        "rows": selectors.channel_rows(), "file_set": bool(settings.NOTIFY_CHANNELS_FILE),
        "tested": tested,
    })


@console_page(allowed=can_set_thresholds, refused=CHANNELS_REFUSED, post=True)
def channel_test(request, name: str):
    """Queue one test message (audited); 404 naming the channel when there is none of that name,
    429 past the hourly limit. The delivery worker sends it within a minute."""
    try:
        test = services.channel_test_request(channel_name=name, user=request.user)
    except services.NotificationError as exc:
        return render(request, "notifications/channel_refused.html", {"error": str(exc)}, status=404)
    except RateLimited as limited:
        from console.templatetags.console_tags import format_duration

        error = ngettext(
            "You have asked for %(limit)s test message in the last hour, as many as one person may. Nothing was "
            "sent; you can ask again in %(wait)s.",
            "You have asked for %(limit)s test messages in the last hour, as many as one person may. Nothing was "
            "sent; you can ask again in %(wait)s.", limited.limit) % {
                "limit": limited.limit, "wait": format_duration(limited.retry_after)}
        response = render(request, "notifications/channel_refused.html", {"error": error}, status=429)
        response["Retry-After"] = str(max(1, int(limited.retry_after.total_seconds())))
        return response
    return HttpResponseRedirect(f"{reverse('notification-channels')}?tested={test.channel}#channel-{test.channel}",
                                status=303)
