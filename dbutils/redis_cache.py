"""Django's Redis cache, with one client per connection pool and an increment in one round trip.

The cache holds the API's throttle windows, counted on every request, and the log-in lock-outs.
Django's client builds a new ``redis.Redis`` for every operation, and redis-py's constructor fills
a table of some 170 response callbacks each time: more CPU than the operation itself. A
``redis.Redis`` may be shared (it takes a connection from its pool for each command), so one is
kept per pool. Django's ``incr`` is EXISTS then INCRBY, two round trips; here it is one script,
with the same answers (ValueError for a missing key, and no key created).

Settings: ``"BACKEND": "dbutils.redis_cache.RedisCache"``, as Django's own.
"""

from django.core.cache.backends import redis as django_redis

_INCREMENT_EXISTING = """
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('INCRBY', KEYS[1], ARGV[1]) end
return false
"""


class RedisCacheClient(django_redis.RedisCacheClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients = {}
        self._increments = {}

    def get_client(self, key=None, *, write=False):
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            client = self._clients[index] = self._client(connection_pool=self._get_connection_pool(write))
            self._increments[index] = client.register_script(_INCREMENT_EXISTING)
        return client

    def incr(self, key, delta):
        self.get_client(key, write=True)
        value = self._increments[self._get_connection_pool_index(True)](keys=[key], args=[delta])
        if value is None:
            raise ValueError(f"Key '{key}' not found.")
        return value


class RedisCache(django_redis.RedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = RedisCacheClient
