"""The admin site: superusers only. Staff who are not superusers get no admin at all; console
roles are given in the admin by a superuser, and every change is recorded (RoleChangeAudit)."""

from django.contrib import admin


class ConsoleAdminSite(admin.AdminSite):
    site_header = "Tidy Recovery Console administration"

    def has_permission(self, request):
        return request.user.is_active and request.user.is_superuser
