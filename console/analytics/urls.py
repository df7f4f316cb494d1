"""The analytics page, included at the root by console/urls.py."""


urlpatterns: list = []
