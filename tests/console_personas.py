"""Personas for the console tests: one user per role, one signed-in user without a role."""

import pytest
from django.contrib.auth.models import Group, User

from console.roles import ALL_ROLES, OPERATOR, SHIFT_LEAD, SUPERVISOR

ROLE_USERS = {"supervisor": SUPERVISOR, "operator": OPERATOR, "shiftlead": SHIFT_LEAD}


def make_user(username: str, role: str | None = None, password: str = "pw-" + "x" * 8) -> User:
    user = User.objects.create_user(username=username, password=password)
    if role:
        # Transactional tests flush the tables, the migration's groups included.
        group, _ = Group.objects.get_or_create(name=role)
        user.groups.add(group)
    return user


@pytest.fixture
def personas(db):
    for role in ALL_ROLES:
        Group.objects.get_or_create(name=role)
    users = {name: make_user(name, role) for name, role in ROLE_USERS.items()}
    users["norole"] = make_user("norole")
    return users


@pytest.fixture
def supervisor_client(client, personas):
    client.force_login(personas["supervisor"])
    return client
