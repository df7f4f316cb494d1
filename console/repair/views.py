"""Repair pages: thin views over the console.repair services and console.repair.selectors.

Every repair page needs a console role: anonymous -> sign-in page, signed in without a role ->
403 before anything is read or written. POST views refuse GET with 405; the service checks the
action's role (403 and an audited refusal). Form errors re-render at 200; refused applies
answer 409 (403 for a role, 503 for a busy workflow) with the refusal and the current evidence.
Hostile input (console.input_checks) is refused with 400 naming the field before the service
runs: nothing, not even the audit's refusal row, is written for it.
"""

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.html import conditional_escape, escape, format_html
from django.utils.safestring import mark_safe
from django.utils.translation import get_language, gettext_noop
from django.utils.translation import gettext as _

from console import repair, roles
from console.csv_safe import streaming_csv
from console.input_checks import HOSTILE, InputRefused, ascii_int, is_ascii_int, safe_text
from console.models import CancelProposal, RepairAudit, RepairBatch
from console.pages import console_page, refresh_seconds, wants_fragment
from console.repair import registry, selectors, texts
from console.repair.batch import check_batch_permission
from console.repair.evidence_diff import evidence_rows
from console.repair.forms import (
    AuditFilterForm,
    BatchApplyForm,
    BatchSelectForm,
    ConfirmFields,
    ProposalDecisionForm,
    RepairForm,
    new_key,
)
from console.repair.registry import ACTIONS_BY_SLUG, RepairAction
from console.repair.texts import shown

BATCH_FILTERS = ("reason", "origin", "age", "q", "aisle")  # the paused list's filter names


def _action(slug: str) -> str:
    if slug not in ACTIONS_BY_SLUG:
        raise Http404(_("No repair action %(slug)s.") % {"slug": repr(slug)})
    return ACTIONS_BY_SLUG[slug]


def _refuse_hostile(*forms) -> None:
    """InputRefused naming the first field a SafeInputForm refused as hostile."""
    for form in forms:
        for name, errors in form.errors.as_data().items():
            for error in errors:
                if error.code == HOSTILE:
                    raise InputRefused(name, _field_message(gettext_noop("field '%(name)s': %(message)s"), name,
                                                            message=error.message))


def _field_message(template: str, name: str, **values) -> str:
    """A bad-input message naming a field: in English as always; in another language translated,
    the field's name shown as code."""
    if (get_language() or "en").startswith("en"):
        return template % {"name": name, **values}
    shown_values = {"name": format_html("<code>{}</code>", name),
                    **{k: conditional_escape(v) for k, v in values.items()}}
    return mark_safe(escape(_(template)) % shown_values)  # noqa: S308 (catalogue text, values escaped)


def _workflow_values(data, *, with_fingerprint: bool) -> dict[int, str]:
    """The posted `workflow` values ("<id>" or "<id>:<fingerprint>"), or InputRefused."""
    out = {}
    for value in data.getlist("workflow"):
        wid, _, fp = value.partition(":") if with_fingerprint else (value, "", "")
        out[ascii_int(wid, field="workflow", minimum=1)] = safe_text(fp, field="workflow", max_length=64,
                                                                     required=False)
    return out


def _bad_input(request, refused: InputRefused, *, workflow_id: int | None = None):
    return render(request, "repair/bad_input.html", {"field": refused.field, "message": refused.message,
                                                     "workflow_id": workflow_id}, status=refused.status)


def _request_from(form_data, workflow_id: int, action: str) -> repair.RepairRequest:
    return repair.RepairRequest(
        action=action, workflow_id=workflow_id,
        reason_code=(form_data.get("reason_code") or "")[:64],
        reason_text=(form_data.get("reason_text") or "")[: repair.REASON_MAX_LENGTH + 1],
        tray_code=(form_data.get("tray_code") or "")[:200], space_code=(form_data.get("space_code") or "")[:200])


def _show_errors(form, refused: repair.RepairRefused):
    """The service's refusal shown on the form's fields (the service decides, the form shows)."""
    form.is_valid()
    for name, msg in refused.field_errors.items():
        form.add_error(name if name in form.fields else None, shown(msg))
    return form


def _form_page(request, workflow_id: int, action: str, form, *, status: int = 200, refused=None):
    ctx = selectors.workflow_context(workflow_id=workflow_id)
    spec = registry.spec(action)
    asked = registry.scans_asked(action, ctx)
    instruction = str(spec.scans.instruction) if asked else ""
    return render(request, "repair/action_form.html", {
        "scan_instruction": mark_safe(instruction),  # noqa: S308 (the catalogue's HTML, no value in it)
        "floor_confirmation": asked and spec.scans.while_moving,
        "moving_jobs": repair.moving_jobs(ctx) if ctx else [],
        "workflow_id": workflow_id, "action": action, "action_label": spec.label,
        "slug": spec.slug, "form": form, "ctx": ctx, "refused": refused,
        "evidence": ctx.evidence if ctx else None, "step": ctx.subject if ctx else None,
        "pause_reason": selectors.pause_reason(workflow_id=workflow_id),
        "min_length": repair.REASON_MIN_LENGTH,
    }, status=status)


def _refused_page(request, refused: repair.RepairRefused, *, workflow_id: int | None, action: str | None = None):
    return render(request, "repair/refused.html", {
        "refused": refused, "audit": refused.audit, "evidence": refused.evidence, "workflow_id": workflow_id,
        "slug": registry.spec(action).slug if action else None,
    }, status=refused.http_status)


# --- the workflow's repair page --------------------------------------------------------------------


@console_page
def workflow_repair(request, workflow_id: int):
    ctx = selectors.workflow_context(workflow_id=workflow_id)
    if ctx is None:
        raise Http404(_(texts.NOT_FOUND) % {"workflow_id": workflow_id})
    return render(request, "repair/workflow.html", {
        "workflow_id": workflow_id, "ctx": ctx, "evidence": ctx.evidence,
        "panel": selectors.repair_panel(user=request.user, workflow_id=workflow_id)})


@console_page
def action_form(request, workflow_id: int, slug: str):
    action = _action(slug)
    if not repair.permitted(request.user, action):
        raise PermissionDenied("Your role may not take this action.")
    ctx = selectors.workflow_context(workflow_id=workflow_id)
    if ctx is None:
        raise Http404(_(texts.NOT_FOUND) % {"workflow_id": workflow_id})
    form = RepairForm(action=action, pause_reason=selectors.pause_reason(workflow_id=workflow_id),
                      scans=registry.scans_asked(action, ctx))
    return _form_page(request, workflow_id, action, form)


@console_page(post=True)
def action_preview(request, workflow_id: int, slug: str):
    action = _action(slug)
    pause_reason = selectors.pause_reason(workflow_id=workflow_id)
    form = RepairForm(request.POST, action=action, pause_reason=pause_reason,
                      scans=registry.scans_asked(action, selectors.workflow_context(workflow_id=workflow_id)))
    if form.refused:
        return _form_page(request, workflow_id, action, form, status=400)
    req = _request_from(request.POST, workflow_id, action)
    key = new_key()
    try:
        preview = repair.repair_preview(user=request.user, request=req, idempotency_key=key)
    except repair.RepairRefused as refused:
        if refused.code in (repair.Refusal.FORBIDDEN, repair.Refusal.BUSY):
            return _refused_page(request, refused, workflow_id=workflow_id, action=action)
        _show_errors(form, refused)
        return _form_page(request, workflow_id, action, form, refused=refused)
    return render(request, "repair/preview.html", {
        "preview": preview, "workflow_id": workflow_id, "action": action, "slug": slug,
        "action_label": registry.action_label(action), "req": req, "key": key,
        "reason_label": registry.reason_label(req.reason_code),
        "evidence": preview.context.evidence, "result": preview.result,
        "changes": selectors.change_rows(preview.result.changes), "preview_mode": True,
        "is_proposal": registry.spec(action).proposes,
    })


@console_page(post=True)
def action_apply(request, workflow_id: int, slug: str):
    action = _action(slug)
    try:
        _refuse_hostile(RepairForm(request.POST, action=action, pause_reason=None), ConfirmFields(request.POST))
    except InputRefused as exc:
        return _bad_input(request, exc, workflow_id=workflow_id)
    req = _request_from(request.POST, workflow_id, action)
    fingerprint = request.POST.get("fingerprint", "")
    key = request.POST.get("idempotency_key", "")
    try:
        if registry.spec(action).proposes:
            audit = repair.cancel_propose(user=request.user, request=req, previewed_fingerprint=fingerprint,
                                          idempotency_key=key)
        else:
            audit = repair.repair_apply(user=request.user, request=req, previewed_fingerprint=fingerprint,
                                        idempotency_key=key)
    except repair.RepairRefused as refused:
        return _refused_page(request, refused, workflow_id=workflow_id, action=action)
    if audit.proposal_id and registry.spec(audit.action).proposes:
        return _see_other("repair-proposal", audit.proposal_id)
    return _see(audit)


def _see_other(url_name: str, pk: int) -> HttpResponseRedirect:
    return HttpResponseRedirect(reverse(url_name, args=[pk]), status=303)


def _see(audit: RepairAudit) -> HttpResponseRedirect:
    return _see_other("repair-audit-entry", audit.pk)


# --- four eyes -----------------------------------------------------------------------------------------


@console_page
def proposal(request, pk: int):
    prop = get_object_or_404(CancelProposal, pk=pk)
    preview = None
    if prop.status == CancelProposal.Status.PENDING:
        preview = repair.cancel_preview_for_approval(proposal=prop)
    return _proposal_page(request, prop, preview)


def _proposal_page(request, prop, preview, *, approve_form=None, reject_form=None, status=200):
    ctx = selectors.workflow_context(workflow_id=prop.workflow_id)
    stale = preview is not None and preview.fingerprint != prop.fingerprint
    pending = prop.status == CancelProposal.Status.PENDING
    return render(request, "repair/proposal.html", {
        "blocker": shown(repair.approval_blocker(proposal=prop)) if pending and preview is None else "",
        "proposal": prop, "preview": preview, "result": preview.result if preview else None, "stale": stale,
        "reason_label": registry.reason_label(prop.reason_code),
        "changes": selectors.change_rows(preview.result.changes) if preview else [], "preview_mode": True,
        "evidence": ctx.evidence if ctx else None, "workflow_id": prop.workflow_id,
        "can_decide": roles.can_cancel(request.user) and prop.status == CancelProposal.Status.PENDING,
        "is_proposer": prop.proposed_by_id == request.user.pk,
        "approve_form": approve_form or ProposalDecisionForm(action=RepairAction.CANCEL_APPROVE, pause_reason=None,
                                                             initial={"idempotency_key": new_key()}),
        "reject_form": reject_form or ProposalDecisionForm(action=RepairAction.CANCEL_REJECT, pause_reason=None,
                                                           initial={"idempotency_key": new_key()}),
        "trail": selectors.proposal_trail(proposal=prop),
    }, status=status)


def _decide_proposal(request, pk: int, action: str):
    prop = get_object_or_404(CancelProposal, pk=pk)
    data = request.POST
    try:
        _refuse_hostile(ProposalDecisionForm(data, action=action, pause_reason=None))
    except InputRefused as exc:
        return _bad_input(request, exc, workflow_id=prop.workflow_id)
    kwargs = {"user": request.user, "proposal_id": prop.pk, "reason_code": (data.get("reason_code") or "")[:64],
              "reason_text": (data.get("reason_text") or "")[: repair.REASON_MAX_LENGTH + 1],
              "idempotency_key": data.get("idempotency_key", "")}
    try:
        if action == RepairAction.CANCEL_APPROVE:
            audit = repair.cancel_approve(previewed_fingerprint=data.get("fingerprint", ""), **kwargs)
        else:
            audit = repair.cancel_reject(**kwargs)
    except repair.RepairRefused as refused:
        if refused.field_errors:
            form = _show_errors(ProposalDecisionForm(data, action=action, pause_reason=None), refused)
            prop.refresh_from_db()
            preview = repair.cancel_preview_for_approval(proposal=prop)
            forms = {"approve_form" if action == RepairAction.CANCEL_APPROVE else "reject_form": form}
            return _proposal_page(request, prop, preview, **forms)
        return _refused_page(request, refused, workflow_id=prop.workflow_id)
    return _see(audit)


@console_page(post=True)
def proposal_approve(request, pk: int):
    return _decide_proposal(request, pk, RepairAction.CANCEL_APPROVE)


@console_page(post=True)
def proposal_reject(request, pk: int):
    return _decide_proposal(request, pk, RepairAction.CANCEL_REJECT)


@console_page
def proposals(request):
    return render(request, "repair/proposals.html", {
        "pending": CancelProposal.objects.filter(status=CancelProposal.Status.PENDING).select_related("proposed_by"),
        "recent": CancelProposal.objects.exclude(status=CancelProposal.Status.PENDING)
        .select_related("proposed_by", "decided_by")[:50],
    })


# --- the audit trail -------------------------------------------------------------------------------------


@console_page
def audit_list(request):
    form = AuditFilterForm(request.GET)
    filters = form.cleaned_data if form.is_valid() else {}
    before = request.GET.get("before", "")
    if before and not is_ascii_int(before, minimum=1):
        return _bad_input(request, InputRefused("before", _field_message(
            gettext_noop("field '%(name)s' must be an audit entry id"), "before")))
    before_id = int(before) if before else None
    page = selectors.audit_page(filters=filters, before_id=before_id)
    query = request.GET.copy()
    query.pop("before", None)
    return render(request, "repair/audit_list.html", {"form": form, "page": page, "query": query.urlencode()},
                  status=400 if form.refused else 200)


@console_page
def audit_csv(request):
    form = AuditFilterForm(request.GET)
    try:
        _refuse_hostile(form)
    except InputRefused as exc:
        return _bad_input(request, exc)
    filters = form.cleaned_data if form.is_valid() else {}
    return streaming_csv(selectors.audit_csv_rows(filters=filters), filename="repair-audit.csv")


@console_page
def audit_entry(request, pk: int):
    entry = get_object_or_404(RepairAudit.objects.select_related("proposal", "batch"), pk=pk)
    rows = evidence_rows(entry.evidence_before, entry.evidence_after)
    return render(request, "repair/audit_entry.html", {"entry": entry, "workflow_id": entry.workflow_id,
                                                       "action_label": registry.action_label(entry.action),
                                                       "reason_label": registry.reason_label(entry.reason_code),
                                                       "message": selectors.shown_message(entry),
                                                       "decision_after": selectors.shown_decision_after(entry),
                                                       "changes": selectors.change_rows(entry.changes),
                                                       "evidence_rows": rows,
                                                       "evidence_changed": sum(r.changed for r in rows)})


# --- batch re-check ------------------------------------------------------------------------------------------


@console_page
def batch_select(request):
    if not roles.can_repair(request.user):
        raise PermissionDenied("Your role may not re-check workflows.")
    form = BatchSelectForm(request.GET, reasons=selectors.paused_reasons())
    filters = form.cleaned_data if form.is_valid() else {}
    rows, total = selectors.batch_candidates(**{k: filters.get(k) or "" for k in BATCH_FILTERS})
    return render(request, "repair/batch_select.html", {"form": form, "rows": rows, "total": total,
                                                        "limit": repair.BATCH_LIMIT},
                  status=400 if form.refused else 200)


def _selected(request) -> tuple[list, dict]:
    data = request.POST
    if data.get("all_matching"):
        selection = {"all_matching": True, **{k: data.get(k, "")[:100] for k in BATCH_FILTERS}}
        rows, _ = selectors.batch_candidates(**{k: selection[k] for k in BATCH_FILTERS})
    else:
        ids = sorted(_workflow_values(data, with_fingerprint=False))
        selection = {"workflow_ids": ids}
        rows = selectors.batch_rows(workflow_ids=ids)
    return rows, selection


@console_page(post=True)
def batch_preview(request):
    try:
        _refuse_hostile(BatchSelectForm(request.POST))
        _workflow_values(request.POST, with_fingerprint=False)
    except InputRefused as exc:
        return _bad_input(request, exc)
    try:
        check_batch_permission(request.user, stage=RepairAudit.Stage.PREVIEW)
    except repair.RepairRefused as refused:
        return _refused_page(request, refused, workflow_id=None)
    rows, selection = _selected(request)
    form = BatchApplyForm(initial={"idempotency_key": new_key()})
    return render(request, "repair/batch_preview.html", {"rows": rows, "selection": selection, "form": form,
                                                         "limit": repair.BATCH_LIMIT})


@console_page(post=True)
def batch_apply(request):
    data = request.POST
    try:
        _refuse_hostile(BatchApplyForm(data))
        fingerprints = _workflow_values(data, with_fingerprint=True)
    except InputRefused as exc:
        return _bad_input(request, exc)
    selection = {"workflow_ids": sorted(fingerprints), "all_matching": bool(data.get("all_matching"))}
    try:
        batch = repair.batch_recheck(user=request.user, fingerprints=fingerprints,
                                     reason_code=(data.get("reason_code") or "")[:64],
                                     reason_text=(data.get("reason_text") or "")[: repair.REASON_MAX_LENGTH + 1],
                                     selection=selection, idempotency_key=data.get("idempotency_key", ""))
    except repair.RepairRefused as refused:
        if refused.field_errors:
            form = _show_errors(BatchApplyForm(data), refused)
            rows = selectors.batch_rows(workflow_ids=sorted(fingerprints))
            return render(request, "repair/batch_preview.html", {"rows": rows, "selection": selection,
                                                                 "form": form, "limit": repair.BATCH_LIMIT})
        return _refused_page(request, refused, workflow_id=None)
    return _see_other("repair-batch-result", batch.pk)


@console_page
def batch_result(request, pk: int):
    """The batch's progress while the qcluster runs it; an htmx poll gets the progress fragment,
    which stops polling (no trigger rendered) once every workflow has its outcome."""
    batch = get_object_or_404(RepairBatch.objects.select_related("created_by"), pk=pk)
    progress = selectors.batch_progress(batch=batch)
    entries = [(e, selectors.shown_message(e)) for e in progress.entries]
    context = {"batch": batch, "progress": progress, "entries": entries, "applied": progress.applied,
               "refused": progress.refused, "refresh_seconds": refresh_seconds()}
    if wants_fragment(request):
        return render(request, "repair/batch_result.html#batch-progress", context)
    return render(request, "repair/batch_result.html", context)
