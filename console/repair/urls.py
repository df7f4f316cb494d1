"""Audited operator repair, included at /repair/."""

from django.urls import path, register_converter

from console.input_checks import BIGINT_MAX, ascii_int
from console.repair import views as v


class BigintConverter:
    """A positive bigint id (1..2^63-1) in ASCII digits: a longer number is a 404, never a 500
    from PostgreSQL's bigint range."""

    regex = "[0-9]{1,19}"

    def to_python(self, value: str) -> int:
        return ascii_int(value, field="id", minimum=1, maximum=BIGINT_MAX)  # InputRefused is a ValueError

    def to_url(self, value) -> str:
        return str(value)


register_converter(BigintConverter, "bigint")

urlpatterns = [
    path("workflow/<bigint:workflow_id>/", v.workflow_repair, name="repair-workflow"),
    path("workflow/<bigint:workflow_id>/<slug:slug>/", v.action_form, name="repair-form"),
    path("workflow/<bigint:workflow_id>/<slug:slug>/preview", v.action_preview, name="repair-preview"),
    path("workflow/<bigint:workflow_id>/<slug:slug>/apply", v.action_apply, name="repair-apply"),
    path("proposals/", v.proposals, name="repair-proposals"),
    path("proposals/<bigint:pk>/", v.proposal, name="repair-proposal"),
    path("proposals/<bigint:pk>/approve", v.proposal_approve, name="repair-proposal-approve"),
    path("proposals/<bigint:pk>/reject", v.proposal_reject, name="repair-proposal-reject"),
    path("audit/", v.audit_list, name="repair-audit"),
    path("audit.csv", v.audit_csv, name="repair-audit-csv"),
    path("audit/<bigint:pk>/", v.audit_entry, name="repair-audit-entry"),
    path("batch/", v.batch_select, name="repair-batch"),
    path("batch/preview", v.batch_preview, name="repair-batch-preview"),
    path("batch/apply", v.batch_apply, name="repair-batch-apply"),
    path("batch/<bigint:pk>/", v.batch_result, name="repair-batch-result"),
]
