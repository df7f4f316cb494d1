"""Notifications in Django admin: read-only (the evaluator and the console own every change)."""

from django.contrib import admin

from console.admin_base import ReadOnlyAdmin
from console.notifications.models import Notification, NotificationAcknowledgement, NotificationDelivery


@admin.register(Notification)
class NotificationAdmin(ReadOnlyAdmin):
    list_display = ("id", "opened_at", "event", "severity", "state", "dedup_key", "escalated_at", "resolved_at")
    list_filter = ("event", "state", "severity")
    search_fields = ("dedup_key", "subject", "=workflow_id")


@admin.register(NotificationAcknowledgement)
class NotificationAcknowledgementAdmin(ReadOnlyAdmin):
    list_display = ("id", "at", "username", "notification")


@admin.register(NotificationDelivery)
class NotificationDeliveryAdmin(ReadOnlyAdmin):
    list_display = ("id", "notification", "channel", "kind", "severity", "state", "attempts", "next_attempt_at",
                    "sent_at", "last_error")
    list_filter = ("channel", "kind", "state")
