"""The back-office admin's shared infrastructure: the site, base admin classes, the capped paginator,
the index-walking filter, indexed search, streamed CSV exports and HTML helpers.

It knows none of the apps: each app's ``admin`` module builds its pages from these.
"""
