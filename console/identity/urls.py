"""Sign-in and sign-out, included at the root by console/urls.py (design §14)."""

from django.urls import path

from console.identity import views

urlpatterns = [
    path("accounts/login/", views.SignInView.as_view(), name="login"),
    path("accounts/logout/", views.SignOutView.as_view(), name="logout"),
    path("accounts/oidc/start/", views.oidc_start, name="oidc-start"),
    path("accounts/oidc/callback/", views.oidc_callback, name="oidc-callback"),
]
