"""Admin rules: superusers only, django-q2 schedules read-only, and every change of a user's
groups recorded append-only (who, when, before, after) and listed for shift leads."""

import pytest
from django.contrib.auth.models import Group, User
from django.db import DatabaseError, connection, transaction
from django.urls import reverse
from django.utils import timezone
from django_q.models import Schedule

from console.models import RoleChangeAudit
from console.roles import OPERATOR, SHIFT_LEAD, SUPERVISOR
from tests.console_personas import make_user


@pytest.fixture
def groups(db):
    return {name: Group.objects.get_or_create(name=name)[0] for name in (SUPERVISOR, OPERATOR, SHIFT_LEAD)}


@pytest.fixture
def root(db):
    return User.objects.create_superuser("root", password="root-password-for-tests")


@pytest.fixture
def schedule(db):
    return Schedule.objects.create(name="probe", func="recovery.tasks.run_recovery", schedule_type=Schedule.MINUTES,
                                   minutes=1)


def test_staff_who_are_not_superusers_get_no_admin(client, groups):
    staff = make_user("staffer", SHIFT_LEAD)
    staff.is_staff = True
    staff.save()
    client.force_login(staff)
    for path in ("/admin/", "/admin/auth/user/", f"/admin/auth/user/{staff.pk}/change/", "/admin/django_q/schedule/"):
        response = client.get(path)
        assert response.status_code == 302 and response["Location"].startswith("/admin/login/"), path


def test_a_superuser_gets_the_admin(client, root):
    client.force_login(root)
    assert client.get("/admin/").status_code == 200
    assert client.get("/admin/auth/user/").status_code == 200


def test_schedules_are_read_only_in_the_admin(client, root, schedule):
    client.force_login(root)
    assert client.get("/admin/django_q/schedule/").status_code == 200
    assert client.get("/admin/django_q/schedule/add/").status_code == 403
    page = client.get(f"/admin/django_q/schedule/{schedule.pk}/change/")
    assert page.status_code == 200 and b'name="func"' not in page.content  # shown, not editable
    response = client.post(f"/admin/django_q/schedule/{schedule.pk}/change/",
                           {"name": "probe", "func": "os.system", "schedule_type": "I", "minutes": 1})
    assert response.status_code == 403
    assert client.post(f"/admin/django_q/schedule/{schedule.pk}/delete/", {"post": "yes"}).status_code == 403
    schedule.refresh_from_db()
    assert schedule.func == "recovery.tasks.run_recovery"


def _change_form(user: User, group_ids: list[int]) -> dict:
    return {"username": user.username, "first_name": "", "last_name": "", "email": "", "is_active": "on",
            "groups": [str(g) for g in group_ids], "last_login_0": "", "last_login_1": "",
            "date_joined_0": user.date_joined.strftime("%Y-%m-%d"), "date_joined_1": "00:00:00"}


def test_a_role_change_in_the_admin_is_recorded_once_with_who_before_and_after(client, root, groups):
    target = make_user("ivana", OPERATOR)
    known = set(RoleChangeAudit.objects.values_list("id", flat=True))
    client.force_login(root)
    response = client.post(f"/admin/auth/user/{target.pk}/change/",
                           _change_form(target, [groups[SHIFT_LEAD].pk, groups[SUPERVISOR].pk]))
    assert response.status_code == 302, response.content.decode()[:2000]
    new = list(RoleChangeAudit.objects.exclude(id__in=known).values("changed_by", "user_id", "username", "before",
                                                                    "after", "via"))
    assert new == [{"changed_by": "root", "user_id": target.pk, "username": "ivana", "before": [OPERATOR],
                    "after": [SHIFT_LEAD, SUPERVISOR], "via": "admin"}]
    # A save that leaves the groups as they are records nothing.
    client.post(f"/admin/auth/user/{target.pk}/change/",
                _change_form(target, [groups[SHIFT_LEAD].pk, groups[SUPERVISOR].pk]))
    assert RoleChangeAudit.objects.exclude(id__in=known).count() == 1


def test_role_changes_outside_the_admin_are_recorded_from_either_side(groups):
    user = make_user("marta")
    user.groups.add(groups[OPERATOR])
    groups[SHIFT_LEAD].user_set.add(user)
    user.groups.remove(groups[OPERATOR])
    groups[SHIFT_LEAD].user_set.clear()
    rows = list(RoleChangeAudit.objects.filter(user_id=user.pk).order_by("id").values_list("before", "after", "via"))
    assert rows == [([], [OPERATOR], "application"), ([OPERATOR], [OPERATOR, SHIFT_LEAD], "application"),
                    ([OPERATOR, SHIFT_LEAD], [SHIFT_LEAD], "application"), ([SHIFT_LEAD], [], "application")]


@pytest.mark.parametrize("sql", [
    "UPDATE console_rolechangeaudit SET after = '[\"shift lead\"]'",
    "DELETE FROM console_rolechangeaudit",
    "TRUNCATE console_rolechangeaudit",
])
def test_the_database_refuses_to_change_or_remove_role_change_rows(groups, sql):
    make_user("marta", OPERATOR)
    before = list(RoleChangeAudit.objects.values_list("id", "after"))
    assert before
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql)
    assert list(RoleChangeAudit.objects.values_list("id", "after")) == before


def test_shift_leads_see_the_role_changes_in_the_console(client, groups):
    lead = make_user("lead", SHIFT_LEAD)
    make_user("marta", OPERATOR)
    client.force_login(lead)
    page = client.get(reverse("security"))
    assert page.status_code == 200
    assert {c.username for c in page.context["role_changes"]} >= {"lead", "marta"}
    assert "Role changes" in page.content.decode()
    client.force_login(make_user("op", OPERATOR))
    assert client.get(reverse("security")).status_code == 403


# --- superuser, staff and active are roles too ---------------------------------------------------

ORDINARY = {"is_superuser": False, "is_staff": False, "is_active": True}


def _new_rows(known: set) -> list[dict]:
    return list(RoleChangeAudit.objects.exclude(id__in=known).order_by("id").values(
        "changed_by", "username", "before", "after", "flags_before", "flags_after", "via"))


def test_granting_and_withdrawing_superuser_staff_and_active_are_role_changes(groups):
    user = make_user("marta", OPERATOR)
    known = set(RoleChangeAudit.objects.values_list("id", flat=True))
    user.is_superuser = True
    user.save()
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    user.first_name = "Marta"
    user.save()  # no flag changed: no row
    user.is_superuser = user.is_staff = False
    user.is_active = False
    user.save()
    user.last_login = timezone.now()
    user.save(update_fields=["last_login"])  # what a sign-in saves: no row
    granted = {**ORDINARY, "is_superuser": True}
    assert _new_rows(known) == [
        {"changed_by": "", "username": "marta", "before": [OPERATOR], "after": [OPERATOR], "flags_before": ORDINARY,
         "flags_after": granted, "via": "application"},
        {"changed_by": "", "username": "marta", "before": [OPERATOR], "after": [OPERATOR], "flags_before": granted,
         "flags_after": {**granted, "is_staff": True}, "via": "application"},
        {"changed_by": "", "username": "marta", "before": [OPERATOR], "after": [OPERATOR],
         "flags_before": {**granted, "is_staff": True}, "flags_after": {**ORDINARY, "is_active": False},
         "via": "application"},
    ]


def test_an_account_created_as_superuser_is_recorded_and_an_ordinary_one_is_not(db):
    known = set(RoleChangeAudit.objects.values_list("id", flat=True))
    User.objects.create_user("plain", password="plain-password-for-tests")
    User.objects.create_superuser("boss", password="boss-password-for-tests")
    assert _new_rows(known) == [{"changed_by": "", "username": "boss", "before": [], "after": [],
                                 "flags_before": ORDINARY, "flags_after": {**ORDINARY, "is_superuser": True,
                                                                           "is_staff": True},
                                 "via": "application"}]


def test_a_superuser_granted_in_the_admin_is_one_row_with_the_groups(client, root, groups):
    target = make_user("ivana", OPERATOR)
    known = set(RoleChangeAudit.objects.values_list("id", flat=True))
    client.force_login(root)
    form = {**_change_form(target, [groups[SHIFT_LEAD].pk]), "is_superuser": "on", "is_staff": "on"}
    response = client.post(f"/admin/auth/user/{target.pk}/change/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert _new_rows(known) == [{"changed_by": "root", "username": "ivana", "before": [OPERATOR],
                                 "after": [SHIFT_LEAD], "flags_before": ORDINARY,
                                 "flags_after": {"is_superuser": True, "is_staff": True, "is_active": True},
                                 "via": "admin"}]
    # Withdrawn again, groups untouched: one more row, by the admin.
    form = _change_form(target, [groups[SHIFT_LEAD].pk])
    del form["is_active"]
    assert client.post(f"/admin/auth/user/{target.pk}/change/", form).status_code == 302
    rows = _new_rows(known)
    assert len(rows) == 2 and rows[1] == {
        "changed_by": "root", "username": "ivana", "before": [SHIFT_LEAD], "after": [SHIFT_LEAD],
        "flags_before": {"is_superuser": True, "is_staff": True, "is_active": True},
        "flags_after": {**ORDINARY, "is_active": False}, "via": "admin"}


def test_the_security_page_lists_a_superuser_grant(client, groups):
    lead = make_user("lead", SHIFT_LEAD)
    marta = make_user("marta", OPERATOR)
    marta.is_superuser = True
    marta.save()
    client.force_login(lead)
    page = client.get(reverse("security"))
    assert page.status_code == 200
    (change,) = [c for c in page.context["role_changes"] if c.username == "marta" and c.flags_before != c.flags_after]
    assert ([str(x) for x in change.before_labels], [str(x) for x in change.after_labels]) == (
        ["operator"], ["operator", "superuser"])
    assert "operator, superuser" in page.content.decode()
