"""Repair panel for the workflow page (placeholder until the audited repair flow lands)."""

from django import template

register = template.Library()


@register.simple_tag(takes_context=True)
def workflow_repair_panel(context, workflow_id):
    return ""
