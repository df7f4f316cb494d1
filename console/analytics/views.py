"""/analytics/ for shift leads: the page, and the same figures as CSV (?format=csv)."""

from django.conf import settings
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext_lazy

from console import roles
from console.analytics.forms import AnalyticsForm
from console.analytics.schedule import bring_forward
from console.analytics.selectors import WINDOWS, csv_rows, newest_snapshot
from console.charts import lines_chart
from console.csv_safe import streaming_csv
from console.input_checks import field_errors
from console.pages import console_page

REFUSED = gettext_lazy("The analytics are for shift leads.")


def _minutes(seconds: float | None) -> float | None:
    return None if seconds is None else seconds / 60


@console_page(allowed=roles.can_read_analytics, refused=REFUSED)
def analytics_page(request):
    form = AnalyticsForm(request.GET)
    if not form.is_valid():
        return render(request, "analytics/analytics.html", {"form": form, "field_errors": field_errors(form),
                                                            "report": None}, status=400)
    snapshot = newest_snapshot()
    if snapshot is None:
        # Nothing computed yet (a fresh install): one computation is queued, the page answers at once.
        bring_forward()
        return render(request, "analytics/analytics.html", {"form": form, "report": None, "computing": True,
                                                            "refresh_minutes": settings.ANALYTICS_REFRESH_MINUTES})
    report = snapshot.report
    if form.cleaned_data.get("format") == "csv":
        filename = timezone.localtime(report.now).strftime("analytics-%Y-%m-%d.csv")
        return streaming_csv(csv_rows(report), filename=filename)
    trends = [(m, lines_chart({"p50": [_minutes(w.stat.p50) for w in m.weeks],
                               "p90": [_minutes(w.stat.p90) for w in m.weeks]})) for m in report.metrics]
    return render(request, "analytics/analytics.html", {"form": form, "report": report, "windows": WINDOWS,
                                                        "trends": trends, "computed_at": snapshot.computed_at,
                                                        "refresh_minutes": settings.ANALYTICS_REFRESH_MINUTES})
