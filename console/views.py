from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.shortcuts import render

from console import selectors


@login_required
def paused_workflows(request):
    context = {
        "rows": selectors.paused_workflows_list(),
        "last_cycle": selectors.last_cycle(),
        "retained_locks": selectors.retained_lock_count(),
    }
    template = "console/paused_list.html#paused-table" if request.htmx else "console/paused_list.html"
    return render(request, template, context)


def health(request):
    cycle = selectors.last_cycle()
    return JsonResponse({
        "last_cycle": cycle.pk if cycle else None,
        "last_cycle_outcome": cycle.outcome if cycle else None,
        "last_cycle_finished_at": cycle.finished_at.isoformat() if cycle and cycle.finished_at else None,
    })
