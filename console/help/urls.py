"""The guides' URLs (console/help), included at the root by console/urls.py."""

from django.urls import path

from console.help import views

urlpatterns = [
    path("help/", views.user_guide, name="help"),
    # <str:...> takes no '/', and the views answer 404 to a name not on their allow-list.
    path("help/images/<str:file>", views.image, name="help-image"),
    path("help/<str:name>/", views.guide, name="help-guide"),
]
