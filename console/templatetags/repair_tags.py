"""The repair panel of the workflow page: `{% load repair_tags %}{% workflow_repair_panel workflow.workflow_id %}`.

It offers only the actions whose preconditions hold on the current evidence (and says why the
others do not), links a pending cancel proposal, and shows the workflow's audit trail. A user
without the repair permission (a supervisor) sees the trail and no repair controls.
"""

from django import template
from django.template.loader import render_to_string

from console import repair, repair_codes, repair_selectors, roles
from console.repair_views import SLUG_OF

register = template.Library()


@register.simple_tag(takes_context=True)
def workflow_repair_panel(context, workflow_id):
    request = context.get("request")
    user = getattr(request, "user", None) or context.get("user")
    workflow_id = int(workflow_id)
    can_repair = roles.can_repair(user)
    ctx, offers = None, []
    if can_repair:  # the offers need the evidence; a viewer only gets the trail (two queries)
        ctx, offers = repair.repair_offers(user=user, workflow_id=workflow_id)
    # One query for the trail; a pending proposal always has its CANCEL_PROPOSE row there.
    trail = repair_selectors.workflow_audit_trail(workflow_id=workflow_id)
    pending = next((e.proposal for e in trail if e.proposal is not None and e.proposal.status == "PENDING"), None)
    return render_to_string("repair/_panel.html", {
        "workflow_id": workflow_id, "ctx": ctx, "can_repair": can_repair and ctx is not None,
        "can_cancel": roles.can_cancel(user),
        "offers": [(o, SLUG_OF[o.action]) for o in offers if o.permitted],
        "pending": pending, "trail": trail,
        "paused": ctx is not None and ctx.evidence.workflow_status == repair.PAUSED,
    }, request=request)


@register.filter
def reason_label(code: str) -> str:
    return repair_codes.label(code)


@register.simple_tag
def workflow_url(workflow_id) -> str:
    """The console's workflow page when it exists, else the repair page of the workflow."""
    from django.urls import NoReverseMatch, reverse

    try:
        return reverse("workflow-detail", args=[workflow_id])
    except NoReverseMatch:
        return reverse("repair-workflow", args=[workflow_id])


@register.filter
def outcome_class(outcome: str) -> str:
    return "refused" if outcome.startswith("REFUSED") else "applied"


@register.simple_tag
def runbook_url(pause_reason) -> str:
    """The runbook entry (console reason-code page) for a pause reason, or '' when there is none."""
    from django.urls import NoReverseMatch, reverse

    try:
        return f"{reverse('reason-codes')}#{pause_reason}" if pause_reason else ""
    except NoReverseMatch:
        return ""
