from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from console import floor_views, health, metrics, rack_map_views, security_views, views

urlpatterns = [
    path("", views.dashboard, name="dashboard"),
    path("paused/", views.paused_workflows, name="paused-workflows"),
    path("workflows/<int:workflow_id>/", views.workflow_detail, name="workflow-detail"),
    path("locks/", views.locks, name="locks"),
    path("map/", rack_map_views.rack_map_page, name="rack-map"),
    path("reason-codes/", views.reason_codes, name="reason-codes"),
    path("recovery/", views.recovery_health, name="recovery-health"),
    path("flow/", views.flow_health, name="flow-health"),
    path("active/", floor_views.active_workflows, name="active-workflows"),
    path("search/", floor_views.search, name="search"),
    path("handover/", floor_views.handover, name="handover"),
    path("workflows/<int:workflow_id>/notes/", floor_views.note_add, name="workflow-note-add"),
    path("security/", security_views.security_overview, name="security"),
    # Probes and the Prometheus scrape: no sign-in (README "Operations").
    path("health/live", health.live, name="health-live"),
    path("health/ready", health.ready, name="health-ready"),
    path("metrics", metrics.metrics, name="metrics"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("admin/", admin.site.urls),
    # The language menu posts to Django's set_language view (README "Languages").
    path("i18n/", include("django.conf.urls.i18n")),
    # The WCS machine client (callbacks), owned by console/api_urls.py.
    path("api/wcs/", include("console.api_urls")),
    # Audited operator repair, owned by console/repair/urls.py.
    path("repair/", include("console.repair.urls")),
    # Notifications, acknowledgement and thresholds, owned by console/notifications/urls.py.
    path("notifications/", include("console.notifications.urls")),
]
