"""The Security page, included at the root by console/urls.py."""

from django.urls import path

from console.security import views

urlpatterns = [
    path("security/", views.security_overview, name="security"),
]
