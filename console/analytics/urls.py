"""The analytics page, included at the root by console/urls.py."""

from django.urls import path

from console.analytics import views

urlpatterns = [
    path("analytics/", views.analytics_page, name="analytics"),
]
