"""The cordons page, included at the root by console/urls.py."""

from django.urls import path

from console.cordons import views

urlpatterns = [
    path("cordons/", views.cordons, name="cordons"),
    path("cordons/new/", views.cordon_add, name="cordon-add"),
    path("cordons/<int:cordon_id>/lift/", views.cordon_lift_view, name="cordon-lift"),
]
