"""The floor pages, included at the root by console/urls.py."""

from django.urls import path

from console.floor import views

urlpatterns = [
    path("active/", views.active_workflows, name="active-workflows"),
    path("search/", views.search, name="search"),
    path("handover/", views.handover, name="handover"),
]
