"""The workflow pages, included at the root by console/urls.py."""

from django.urls import path

from console.workflows import views

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("paused/", views.paused_workflows, name="paused-workflows"),
    path("workflows/<int:workflow_id>/", views.workflow_detail, name="workflow-detail"),
    path("locks/", views.locks, name="locks"),
    path("reason-codes/", views.reason_codes, name="reason-codes"),
]
