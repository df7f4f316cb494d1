"""The operations pages, the probes and the Prometheus scrape, included at the root by console/urls.py."""

from django.urls import path

from console.operations import health, metrics, views

urlpatterns = [
    path("recovery/", views.recovery_page, name="recovery-health"),
    path("recovery/observe/", views.observe_page, name="recovery-observe"),
    path("recovery/preview/", views.preview_page, name="recovery-preview"),
    path("recovery/processes/", views.processes_page, name="recovery-processes"),
    path("flow/", views.flow_page, name="flow-health"),
    # Probes and the Prometheus scrape: no sign-in (docs/operations.md "Monitoring").
    path("health/live", health.live, name="health-live"),
    path("health/ready", health.ready, name="health-ready"),
    path("metrics", metrics.metrics, name="metrics"),
]
