"""The WSGI entry: Django's handler, given an environ whose charset Django can read safely
(backoffice.middleware.declared_charset says why)."""

from django.core.handlers.wsgi import WSGIHandler as DjangoWSGIHandler

from backoffice.middleware import declared_charset


class WSGIHandler(DjangoWSGIHandler):
    def __call__(self, environ, start_response):
        return super().__call__(declared_charset(environ), start_response)
