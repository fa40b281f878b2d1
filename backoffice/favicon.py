"""/favicon.ico for the clients that ask for it without reading a page's <link rel="icon">."""

from django.http import HttpResponsePermanentRedirect
from django.templatetags.static import static

FAVICON = "backoffice/favicon.svg"


def favicon(request):
    return HttpResponsePermanentRedirect(static(FAVICON))
