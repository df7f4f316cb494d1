"""Workflow notes, included at the root by console/urls.py."""

from django.urls import path

from console.notes import views

urlpatterns = [
    path("workflows/<int:workflow_id>/notes/", views.note_add, name="workflow-note-add"),
]
