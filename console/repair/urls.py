"""Audited operator repair, included at /repair/."""

from django.urls import path

from console.repair import views as v

urlpatterns = [
    path("workflow/<int:workflow_id>/", v.workflow_repair, name="repair-workflow"),
    path("workflow/<int:workflow_id>/<slug:slug>/", v.action_form, name="repair-form"),
    path("workflow/<int:workflow_id>/<slug:slug>/preview", v.action_preview, name="repair-preview"),
    path("workflow/<int:workflow_id>/<slug:slug>/apply", v.action_apply, name="repair-apply"),
    path("proposals/", v.proposals, name="repair-proposals"),
    path("proposals/<int:pk>/", v.proposal, name="repair-proposal"),
    path("proposals/<int:pk>/approve", v.proposal_approve, name="repair-proposal-approve"),
    path("proposals/<int:pk>/reject", v.proposal_reject, name="repair-proposal-reject"),
    path("audit/", v.audit_list, name="repair-audit"),
    path("audit.csv", v.audit_csv, name="repair-audit-csv"),
    path("audit/<int:pk>/", v.audit_entry, name="repair-audit-entry"),
    path("batch/", v.batch_select, name="repair-batch"),
    path("batch/preview", v.batch_preview, name="repair-batch-preview"),
    path("batch/apply", v.batch_apply, name="repair-batch-apply"),
    path("batch/<int:pk>/", v.batch_result, name="repair-batch-result"),
]
