"""The database router (settings.DATABASE_ROUTERS): the ORM's reads of the console's and
recovery's models go where the request reads (console.replica.read_alias); every write, every
other app (sessions, users, the queue) and every migration uses the primary."""

from django.db import DEFAULT_DB_ALIAS

from console.replica import REPLICA, read_alias

ROUTED_APPS = frozenset({"console", "recovery"})


class ReplicaRouter:
    def db_for_read(self, model, **hints):
        if model._meta.app_label in ROUTED_APPS:
            return read_alias()
        return DEFAULT_DB_ALIAS

    def db_for_write(self, model, **hints):
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints):
        return True  # one database, two servers: an object read from either is the same row

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db != REPLICA
