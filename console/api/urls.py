"""The WCS machine client (mounted at /api/wcs/ by console/urls.py)."""

from django.urls import path

from console.api import contract
from console.api import views as api

urlpatterns = [
    path("job-finish", api.job_finish, name="wcs-job-finish"),
    path("job-status", api.job_status, name="wcs-job-status"),
    path("openapi.json", contract.openapi_document, name="wcs-openapi"),
]
