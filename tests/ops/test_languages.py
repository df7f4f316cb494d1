"""Languages: the committed zh-Hans catalogue is complete and compiled, and the console speaks it.

The compiled .mo is committed (a fresh machine has no gettext tools), so these tests compare it
by content with its .po, never by file times: a fresh clone has arbitrary modification times.
"""

import ast
import gettext
import io
import shutil
import subprocess
import sys
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from tests.ops.test_configuration import _manage

# Other connections (threads, processes, a live server) must see these tests' rows.
pytestmark = pytest.mark.usefixtures("committed_db")

ROOT = Path(__file__).resolve().parents[2]
CATALOGUE = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES"
PO = CATALOGUE / "django.po"
MO = CATALOGUE / "django.mo"


def _entry_key(entry):
    return entry.msgctxt, entry.msgid, entry.msgid_plural


def test_every_marked_string_in_the_catalogue_has_a_chinese_translation():
    po = polib.pofile(str(PO))
    assert len(po) > 100, "the catalogue lost its strings"
    assert not po.metadata_is_fuzzy, "the catalogue header is fuzzy: msgfmt and Django would ignore it"
    assert po.metadata["Plural-Forms"].startswith("nplurals=1;")
    missing = [e.msgid for e in po if e.obsolete is False and (
        e.fuzzy or not (all(e.msgstr_plural.values()) and e.msgstr_plural if e.msgid_plural else e.msgstr))]
    assert missing == [], f"untranslated or fuzzy: {missing}"
    assert po.obsolete_entries() == [], "obsolete entries: run makemessages with --no-obsolete"


def test_translations_keep_the_placeholders_of_their_source():
    import re

    placeholder = re.compile(r"%\((\w+)\)s")
    for entry in polib.pofile(str(PO)):
        sources = [entry.msgid] + ([entry.msgid_plural] if entry.msgid_plural else [])
        wanted = set(placeholder.findall(" ".join(sources)))
        for text in entry.msgstr_plural.values() if entry.msgid_plural else [entry.msgstr]:
            assert set(placeholder.findall(text)) == wanted, entry.msgid


def _catalogue(data: bytes) -> gettext.GNUTranslations:
    return gettext.GNUTranslations(io.BytesIO(data))


def test_the_committed_mo_is_compiled_from_the_committed_po():
    expected = _catalogue(polib.pofile(str(PO)).to_binary())
    committed = _catalogue(MO.read_bytes())
    # The header entry differs harmlessly (msgfmt drops POT-Creation-Date); the messages must not.
    strip = lambda catalogue: {k: v for k, v in catalogue._catalog.items() if k != ""}  # noqa: E731
    assert strip(committed) == strip(expected), "django.mo is stale: run `manage.py compilemessages` and commit it"
    assert committed.charset() == "UTF-8"
    assert [committed.plural(n) for n in (0, 1, 2, 5)] == [0, 0, 0, 0]


@pytest.mark.skipif(shutil.which("xgettext") is None, reason="gettext tools (xgettext) are not installed")
def test_the_catalogue_holds_every_string_marked_in_the_sources(tmp_path):
    # makemessages on a copy of the sources: the committed .po must already hold every marked string.
    for part in ("console", "recovery", "templates", "locale"):
        shutil.copytree(ROOT / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "manage.py", tmp_path / "manage.py")
    result = subprocess.run(
        [sys.executable, "manage.py", "makemessages", "-l", "zh_Hans", "--no-obsolete", "--no-location"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "console.settings",
             "DATABASE_URL": "postgresql://localhost/tidy", "SECRET_KEY": "x" * 50, "WCS_CALLBACK_TOKEN": "t" * 24,
             "METRICS_TOKEN": "m" * 24})
    assert result.returncode == 0, result.stderr
    extracted = {_entry_key(e) for e in polib.pofile(str(tmp_path / "locale/zh_Hans/LC_MESSAGES/django.po"))}
    committed = {_entry_key(e) for e in polib.pofile(str(PO))}
    assert extracted - committed == set(), "marked but not in the catalogue: run makemessages -l zh_Hans"
    assert committed - extracted == set(), "in the catalogue but no longer marked: run makemessages --no-obsolete"


def test_the_dashboard_speaks_the_browsers_language(supervisor_client):
    response = supervisor_client.get(reverse("dashboard"), headers={"Accept-Language": "zh-Hans,zh;q=0.9,en;q=0.5"})
    html = response.content.decode()
    assert response.status_code == 200
    assert '<html lang="zh-hans">' in html
    assert response["Content-Language"] == "zh-hans"
    for chinese in ("整理恢复控制台", "总览", "暂停的工作流", "货位图", "原因码", "退出登录", "今日完成"):
        assert chinese in html
    assert ">Paused workflows<" not in html and ">Sign out<" not in html


def test_without_a_choice_or_a_browser_language_the_console_speaks_english(supervisor_client):
    html = supervisor_client.get(reverse("dashboard")).content.decode()
    assert '<html lang="en">' in html and ">Paused workflows<" in html and "总览" not in html


def test_the_sign_in_page_speaks_chinese_too(client):
    html = client.get(reverse("login"), headers={"Accept-Language": "zh-Hans"}).content.decode()
    assert "<h1>登录</h1>" in html and "用户名" in html and "密码" in html


def test_the_language_menu_is_a_plain_form_with_csrf(supervisor_client):
    html = supervisor_client.get(reverse("dashboard")).content.decode()
    form = html[html.index('<form class="langmenu"'):]
    form = form[:form.index("</form>")]
    assert f'action="{reverse("set_language")}"' in form and 'method="post"' in form
    assert 'name="csrfmiddlewaretoken"' in form
    assert '<option value="zh-hans" lang="zh-hans">简体中文</option>' in form
    assert '<option value="en" lang="en" selected>English</option>' in form


def test_a_chosen_language_is_remembered_across_requests(supervisor_client):
    response = supervisor_client.post(reverse("set_language"), {"language": "zh-hans", "next": "/locks/"})
    assert response.status_code == 302 and response["Location"] == "/locks/"
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"
    assert supervisor_client.session["_language"] == "zh-hans"
    # Later requests, whatever the browser prefers, keep the choice.
    for _ in range(2):
        html = supervisor_client.get(reverse("dashboard"), headers={"Accept-Language": "en"}).content.decode()
        assert '<html lang="zh-hans">' in html and "总览" in html
    # The session keeps it for a signed-in person even when the language cookie is gone.
    del supervisor_client.cookies[settings.LANGUAGE_COOKIE_NAME]
    html = supervisor_client.get(reverse("dashboard"), headers={"Accept-Language": "en"}).content.decode()
    assert '<html lang="zh-hans">' in html
    # Switching back works the same way.
    supervisor_client.post(reverse("set_language"), {"language": "en", "next": "/"})
    html = supervisor_client.get(reverse("dashboard")).content.decode()
    assert '<html lang="en">' in html and ">Dashboard<" in html


def test_an_unknown_language_changes_nothing(supervisor_client):
    response = supervisor_client.post(reverse("set_language"), {"language": "xx", "next": "/"})
    assert response.status_code == 302
    assert settings.LANGUAGE_COOKIE_NAME not in response.cookies
    assert "_language" not in supervisor_client.session


def test_reason_codes_stay_untranslated(supervisor_client, wms):
    from recovery.engine.cycle import run_cycle

    wms.build("job_missing")
    run_cycle()
    html = supervisor_client.get(reverse("dashboard"), headers={"Accept-Language": "zh-Hans"}).content.decode()
    assert "按原因码统计的暂停" in html
    assert "RECOVERY_JOB_MISSING" in html


@pytest.mark.parametrize("raw,expected", [("zh-hans", "zh-hans"), ("EN", "en"), ("", "en")])
def test_language_code_is_read_from_the_environment(monkeypatch, raw, expected):
    from console.env import env_choice

    monkeypatch.setenv("LANGUAGE_CODE", raw)
    assert env_choice("LANGUAGE_CODE", "en", choices=[code for code, _ in settings.LANGUAGES]) == expected


def test_a_bad_language_code_stops_the_program_naming_it():
    result = _manage("check", SECRET_KEY="x", DATABASE_URL="postgresql://localhost/tidy",
                     WCS_CALLBACK_TOKEN="t" * 24, LANGUAGE_CODE="fr")
    assert result.returncode != 0 and "ImproperlyConfigured" in result.stderr
    assert "LANGUAGE_CODE must be one of en, zh-hans, got 'fr'" in result.stderr


# --- each person's choice, kept on their account -------------------------------------------------


def _sign_in(client, username: str, **headers):
    """Through the real sign-in form, so the sign-in signal and its handlers run as in production."""
    response = client.post(reverse("login"), {"username": username, "password": "pw-" + "x" * 8}, headers=headers)
    assert response.status_code == 302, response.content.decode()[:500]
    return response


def _page(client, accept_language: str) -> str:
    return client.get(reverse("dashboard"), headers={"Accept-Language": accept_language}).content.decode()


def test_a_choice_is_kept_on_the_account_and_follows_the_person_to_another_device(personas):
    from django.test import Client

    from console.languages import preferred_language
    from console.models import UserLanguage

    laptop, phone = Client(), Client()
    _sign_in(laptop, "operator")
    laptop.post(reverse("set_language"), {"language": "zh-hans", "next": "/"})
    assert list(UserLanguage.objects.values_list("user__username", "language")) == [("operator", "zh-hans")]
    assert preferred_language(personas["operator"]) == "zh-hans"
    assert preferred_language(personas["supervisor"]) == settings.LANGUAGE_CODE == "en"

    # Another device: no language cookie, a browser asking for English. The account decides.
    _sign_in(phone, "operator", **{"Accept-Language": "en"})
    response = phone.get(reverse("dashboard"), headers={"Accept-Language": "en"})
    html = response.content.decode()
    assert '<html lang="zh-hans">' in html and "总览" in html and response["Content-Language"] == "zh-hans"
    # The device's cookie now follows the choice too.
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"

    # Changing it back on the phone is kept on the account as well.
    phone.post(reverse("set_language"), {"language": "en", "next": "/"})
    assert UserLanguage.objects.get(user=personas["operator"]).language == "en"
    assert preferred_language(personas["operator"]) == "en"


def test_at_sign_in_the_persons_choice_beats_what_the_shared_device_chose_before(personas):
    from console.models import UserLanguage

    UserLanguage.objects.create(user=personas["shiftlead"], language="zh-hans")
    client = Client()
    client.post(reverse("set_language"), {"language": "en", "next": "/"})  # someone signed out chose English
    assert client.cookies[settings.LANGUAGE_COOKIE_NAME].value == "en"
    _sign_in(client, "shiftlead")
    html = client.get(reverse("dashboard"), headers={"Accept-Language": "en"}).content.decode()
    assert '<html lang="zh-hans">' in html and "班组长" in html  # the role, in the header, in Chinese
    # A person without a stored choice on the same device keeps the device's choice.
    client.post(reverse("logout"))
    client.post(reverse("set_language"), {"language": "en", "next": "/"})
    _sign_in(client, "supervisor")
    assert '<html lang="en">' in _page(client, "zh-Hans")


def test_without_a_stored_choice_the_browser_then_language_code_decide(personas, settings):
    client = Client()
    _sign_in(client, "supervisor")
    assert '<html lang="zh-hans">' in _page(client, "zh-CN")
    assert '<html lang="en">' in _page(client, "en-GB")
    settings.LANGUAGE_CODE = "zh-hans"
    assert '<html lang="zh-hans">' in _page(client, "fr")


def test_a_session_from_before_stored_choices_reads_the_account_once(personas):
    from console.languages import SESSION_LANGUAGE_READ_KEY
    from console.models import UserLanguage

    client = Client()
    client.force_login(personas["supervisor"])
    session = client.session
    del session[SESSION_LANGUAGE_READ_KEY]
    session.save()
    UserLanguage.objects.create(user=personas["supervisor"], language="zh-hans")
    client.cookies.pop(settings.LANGUAGE_COOKIE_NAME, None)
    assert '<html lang="zh-hans">' in client.get(reverse("dashboard")).content.decode()
    assert client.session[SESSION_LANGUAGE_READ_KEY] is True and client.session["_language"] == "zh-hans"


@pytest.mark.parametrize("code", ["xx", "fr", "", "zh-hans\x00", "en" * 200])
def test_a_language_the_console_does_not_speak_changes_nothing(supervisor_client, code):
    from console.models import UserLanguage

    response = supervisor_client.post(reverse("set_language"), {"language": code, "next": "/"})
    assert response.status_code in (302, 400)
    assert settings.LANGUAGE_COOKIE_NAME not in response.cookies
    assert "_language" not in supervisor_client.session
    assert not UserLanguage.objects.exists()
    html = supervisor_client.get(reverse("dashboard")).content.decode()
    assert '<html lang="en">' in html


def test_a_signed_out_choice_is_not_stored_on_any_account(client, personas):
    from console.models import UserLanguage

    response = client.post(reverse("set_language"), {"language": "zh-hans", "next": "/accounts/login/"})
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"
    assert not UserLanguage.objects.exists()
    assert "<h1>登录</h1>" in client.get(reverse("login")).content.decode()


def test_the_stored_choice_is_shown_in_admin(client, personas):
    from django.contrib.auth.models import User

    from console.models import UserLanguage

    UserLanguage.objects.create(user=personas["operator"], language="zh-hans")
    User.objects.create_superuser("root", password="pw-" + "x" * 8)
    client.force_login(User.objects.get(username="root"))
    html = client.get(reverse("admin:console_userlanguage_changelist")).content.decode()
    assert "operator" in html and "zh-hans" in html


# --- every module that declares texts -------------------------------------------------------------

MARKERS = {"gettext", "gettext_lazy", "gettext_noop", "_", "ngettext", "ngettext_lazy"}
CONTEXT_MARKERS = {"pgettext", "pgettext_lazy", "npgettext", "npgettext_lazy"}
MESSAGES = {"Message", "message"}  # recovery.messages: a stored text's id, rendered in the reader's language


def _literal(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _dotted(node) -> str | None:
    """`NAME` or `module.NAME` as written: a module-level constant a Message is made from."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


def declared_texts(path: Path) -> tuple[set[tuple[str | None, str]], set[str], set[str]]:
    """A module's marked texts ((context, id)), the literal ids it makes Messages of, and the
    constants it makes Messages of (resolved by importing it)."""
    marked, literal_ids, constants = set(), set(), set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        called = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
        if called in MARKERS and (text := _literal(node.args[0])) is not None:
            marked.add((None, text))
        elif called in CONTEXT_MARKERS and len(node.args) > 1 and (text := _literal(node.args[1])) is not None:
            marked.add((_literal(node.args[0]), text))
        elif called in MESSAGES:
            if (text := _literal(node.args[0])) is not None:
                literal_ids.add(text)
            elif (name := _dotted(node.args[0])) is not None:
                constants.add(name)
    return marked, literal_ids, constants


def _resolve(module, dotted: str):
    value = module
    for part in dotted.split("."):
        value = getattr(value, part, None)
    return value


def modules_declaring_texts() -> dict[str, tuple]:
    found = {}
    for package in ("console", "recovery"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            texts = declared_texts(path)
            if any(texts):
                found[str(path.relative_to(ROOT))] = texts
    return found


def test_every_module_that_declares_texts_has_each_translated():
    """Read from the sources themselves, whichever module declares them (a repair action's
    precondition in console/repair/registry.py as much as a page's label): every marked text, and
    every id a stored Message is made of, has a non-fuzzy Chinese translation."""
    import importlib

    po = polib.pofile(str(PO))
    translated = {(e.msgctxt, e.msgid) for e in po if not e.obsolete and not e.fuzzy
                  and (e.msgstr or (e.msgid_plural and all(e.msgstr_plural.values())))}
    modules = modules_declaring_texts()
    assert {"console/repair/registry.py", "console/repair/texts.py", "recovery/engine/decisions.py",
            "console/notifications/events.py", "console/runbook.py"} <= set(modules)
    untranslated = []
    for path, (marked, literal_ids, constants) in modules.items():
        untranslated += [(path, text) for context, text in marked if (context, text) not in translated]
        ids = set(literal_ids)
        if constants:
            module = importlib.import_module(path.removesuffix(".py").replace("/", ".").removesuffix(".__init__"))
            ids |= {value for name in constants if isinstance(value := _resolve(module, name), str)}
        untranslated += [(path, text) for text in ids if (None, text) not in translated]
    assert untranslated == [], "no non-fuzzy zh-Hans translation in django.po"
