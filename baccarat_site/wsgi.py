import gc
import os

import django
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "baccarat_site.settings")

# Reading the key fails loudly when it is empty ("The SECRET_KEY setting must not be empty"): a
# server without one refuses to start, rather than answer every request that signs with a 500.
settings.SECRET_KEY  # noqa: B018
if not settings.API_TOKEN_PEPPERS:  # no token could be checked: refuse to start, as without a key
    raise ImproperlyConfigured("API_TOKEN_PEPPERS must not be empty (set it unless DEBUG=1).")
django.setup(set_prefix=False)  # as django.core.wsgi.get_wsgi_application, with the project's handler
from backoffice.wsgi import WSGIHandler  # noqa: E402 - its models' apps are ready only now

application = WSGIHandler()

# What is loaded by now lives as long as the process: the collector's full passes need not walk it
# again (they did, every few thousand requests, for tens of milliseconds each).
gc.collect()
gc.freeze()
