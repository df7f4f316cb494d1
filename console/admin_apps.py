"""django.contrib.admin with the console's admin site (superusers only), see console/admin_site.py."""

from django.contrib.admin.apps import AdminConfig


class ConsoleAdminConfig(AdminConfig):
    default_site = "console.admin_site.ConsoleAdminSite"
