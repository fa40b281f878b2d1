import gc
import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "baccarat_site.settings")

# Reading the key fails loudly when it is empty ("The SECRET_KEY setting must not be empty"): a
# server without one refuses to start, rather than answer every request that signs with a 500.
settings.SECRET_KEY  # noqa: B018
application = get_wsgi_application()

# What is loaded by now lives as long as the process: the collector's full passes need not walk it
# again (they did, every few thousand requests, for tens of milliseconds each).
gc.collect()
gc.freeze()
