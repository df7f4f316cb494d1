"""/help/: the guides of docs/ in the page frame (console.help.guides renders them). Any console
role reads them, as it reads the reason codes."""

from django.http import FileResponse, Http404
from django.shortcuts import render
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from console.help import guides
from console.pages import console_page

# The guides' menu, in this order: each guide's name as a reader knows it.
MENU = {
    "user-guide": _("User guide"),
    "operations": _("Operations guide"),
    "wcs-integration": _("WCS integration"),
    "development": _("Development"),
    "architecture": _("Architecture"),
    "authority-matrix": _("Authority matrix"),
    "glossary-zh-Hans": _("Chinese glossary"),
}


def _page(request, name: str, *, status_when_missing: int):
    language = get_language()
    shown = guides.guide(name, language)
    menu = [(other == name, label, guides.guide_url(other)) for other, label in MENU.items()
            if guides.guide_file(other, language)]
    return render(request, "help/guide.html", {
        "guide": shown, "name": name, "label": MENU[name], "menu": menu,
        # The reader asked for another language than the guide is written in (no translation yet).
        "untranslated": shown is not None and shown.language != language,
    }, status=200 if shown else status_when_missing)


@console_page
def user_guide(request):
    # /help/ is linked from every page: without its guide it still answers, saying what is missing.
    return _page(request, guides.USER_GUIDE, status_when_missing=200)


@console_page
def guide(request, name: str):
    if name not in guides.GUIDES or name == guides.USER_GUIDE:
        raise Http404(name)
    return _page(request, name, status_when_missing=404)


@console_page
def image(request, file: str):
    path = guides.image_file(file)
    if path is None:
        raise Http404(file)
    return FileResponse(path.open("rb"), content_type="image/png")
