"""The console's tables in Django admin, read-only, and the admin rules (docs/operations.md, "Security"):
the admin site admits superusers only (console.admin_site.ConsoleAdminSite), django-q2's
schedules cannot be edited, and every change of a user's groups and of its superuser, staff and
active flags is recorded."""

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django_q.admin import ScheduleAdmin
from django_q.models import Schedule

from console.admin.base import ReadOnlyAdmin, ReadOnlyMixin
from console.models import (
    CancelProposal,
    Notification,
    NotificationAcknowledgement,
    NotificationDelivery,
    RepairAudit,
    RepairBatch,
    RoleChangeAudit,
    UserLanguage,
)
from console.security.role_audit import admin_before, admin_record, admin_saving


@admin.register(RepairAudit)
class RepairAuditAdmin(ReadOnlyAdmin):
    list_display = ("id", "at", "username", "action", "workflow_id", "reason_code", "outcome", "consistent_after")
    list_filter = ("action", "stage", "consistent_after", "reason_code")
    search_fields = ("username", "=workflow_id", "reason_text", "outcome", "=idempotency_key")
    date_hierarchy = "at"
    ordering = ("-id",)


@admin.register(CancelProposal)
class CancelProposalAdmin(ReadOnlyAdmin):
    list_display = ("id", "workflow_id", "proposed_by", "proposed_at", "status", "decided_by", "decided_at")
    list_filter = ("status",)


@admin.register(RepairBatch)
class RepairBatchAdmin(ReadOnlyAdmin):
    list_display = ("id", "created_at", "created_by", "reason_code", "workflow_count", "finished_at")


@admin.register(UserLanguage)
class UserLanguageAdmin(ReadOnlyAdmin):
    list_display = ("user", "language", "changed_at")
    list_filter = ("language",)


@admin.register(RoleChangeAudit)
class RoleChangeAuditAdmin(ReadOnlyAdmin):
    list_display = ("id", "at", "changed_by", "username", "before", "after", "flags_before", "flags_after", "via")
    search_fields = ("username", "changed_by")
    ordering = ("-id",)


class ReadOnlyScheduleAdmin(ReadOnlyMixin, ScheduleAdmin):
    """A schedule's `func` names code to run: the schedules are declared by the console itself
    (recovery/runtime/schedule.py), never edited by hand."""


admin.site.unregister(Schedule)
admin.site.register(Schedule, ReadOnlyScheduleAdmin)


class RoleAuditedUserAdmin(UserAdmin):
    """Every save that changes a user's groups or its superuser, staff and active flags writes one
    RoleChangeAudit row (the state before is read in save_model, the row written after
    save_related; the signal handlers stand aside for the whole form view)."""

    def changeform_view(self, request, *args, **kwargs):
        with admin_saving():
            return super().changeform_view(request, *args, **kwargs)

    def save_model(self, request, obj, form, change):
        obj._console_audit_before = admin_before(obj)
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        admin_record(user=form.instance, before=form.instance._console_audit_before,
                     changed_by=request.user.get_username())


User = get_user_model()
admin.site.unregister(User)
admin.site.register(User, RoleAuditedUserAdmin)


# --- notifications: read-only (the evaluator and the console own every change) ---------------


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
