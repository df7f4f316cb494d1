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


from console.notifications import admin as notifications_admin  # noqa: E402, F401  (registers its models)
