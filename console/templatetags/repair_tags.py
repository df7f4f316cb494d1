"""Filters and links of the repair templates. They read nothing: the repair panel is built by
console.repair.selectors.repair_panel and rendered by repair/_panel.html."""

from django import template
from django.urls import reverse

from console.templatetags.console_tags import guide_section_url

register = template.Library()


@register.simple_tag
def workflow_url(workflow_id) -> str:
    return reverse("workflow-detail", args=[workflow_id])


@register.filter
def outcome_class(outcome: str) -> str:
    return "refused" if outcome.startswith("REFUSED") else "applied"


@register.simple_tag
def runbook_url(pause_reason) -> str:
    """The runbook entry for a pause reason, its section of the user guide (/help/), or '' when
    there is none."""
    return guide_section_url(pause_reason)
