"""The console's URLs: each feature package owns its own (docs/architecture.md §2); names are
global (templates use `{% url 'workflow-detail' id %}`)."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("", include("console.workflows.urls")),
    path("", include("console.operations.urls")),
    path("", include("console.floor.urls")),
    path("", include("console.notes.urls")),
    path("", include("console.rack_map.urls")),
    path("", include("console.cordons.urls")),
    path("", include("console.security.urls")),
    path("", include("console.casefile.urls")),
    path("", include("console.analytics.urls")),
    path("", include("console.help.urls")),
    # Sign-in (local, LDAP, OpenID Connect) and sign-out, owned by console/identity/urls.py.
    path("", include("console.identity.urls")),
    path("admin/", admin.site.urls),
    # The language menu posts to Django's set_language view (docs/user-guide.md "Languages").
    path("i18n/", include("django.conf.urls.i18n")),
    # The WCS machine client (callbacks), owned by console/api/urls.py.
    path("api/wcs/", include("console.api.urls")),
    # Audited operator repair, owned by console/repair/urls.py.
    path("repair/", include("console.repair.urls")),
    # Notifications, acknowledgement and thresholds, owned by console/notifications/urls.py.
    path("notifications/", include("console.notifications.urls")),
]
