"""The repair audit in Django admin: read-only (the database refuses changes anyway)."""

from django.contrib import admin

from console.models import CancelProposal, RepairAudit, RepairBatch


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


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


# --- Admin rules (README, "Security") -------------------------------------------
# The admin site itself admits superusers only (console.admin_site.ConsoleAdminSite).

from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.auth.admin import UserAdmin  # noqa: E402
from django_q.admin import ScheduleAdmin  # noqa: E402
from django_q.models import Schedule  # noqa: E402

from console.models import RoleChangeAudit  # noqa: E402
from console.role_audit import admin_role_change  # noqa: E402


class ReadOnlyScheduleAdmin(ScheduleAdmin):
    """A schedule's `func` names code to run: the schedules are declared by the console itself
    (recovery/schedule.py), never edited by hand."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


admin.site.unregister(Schedule)
admin.site.register(Schedule, ReadOnlyScheduleAdmin)


class RoleAuditedUserAdmin(UserAdmin):
    """Every save that changes a user's groups writes one RoleChangeAudit row."""

    def save_related(self, request, form, formsets, change):
        with admin_role_change(user=form.instance, changed_by=request.user.get_username()):
            super().save_related(request, form, formsets, change)


User = get_user_model()
admin.site.unregister(User)
admin.site.register(User, RoleAuditedUserAdmin)


@admin.register(RoleChangeAudit)
class RoleChangeAuditAdmin(ReadOnlyAdmin):
    list_display = ("id", "at", "changed_by", "username", "before", "after", "via")
    search_fields = ("username", "changed_by")
    ordering = ("-id",)
