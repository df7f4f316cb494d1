"""The rack map, included at the root by console/urls.py."""

from django.urls import path

from console.rack_map import views

urlpatterns = [
    path("map/", views.rack_map_page, name="rack-map"),
]
