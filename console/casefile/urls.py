"""The case file's URLs, included at the root by console/urls.py."""

from django.urls import path

from console.casefile import views

urlpatterns = [
    path("workflows/<int:workflow_id>/case-file.json", views.case_file_json, name="case-file-json"),
    path("workflows/<int:workflow_id>/case-file.html", views.case_file_html, name="case-file-html"),
]
