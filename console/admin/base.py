"""The base of every console table in Django admin: read-only. The console's services own every
change (and the database refuses edits to the append-only tables anyway)."""

from django.contrib import admin


class ReadOnlyMixin:
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyAdmin(ReadOnlyMixin, admin.ModelAdmin):
    pass
