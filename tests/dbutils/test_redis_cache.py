"""The Redis cache (dbutils.redis_cache) on the real Redis: Django's answers, one client per
connection pool, and an increment in one round trip. The API's throttle counts on it in production."""

import pytest
import redis

pytestmark = [pytest.mark.services, pytest.mark.django_db]


def test_an_increment_answers_as_django_s_does(redis_cache):
    with pytest.raises(ValueError, match="not found"):
        redis_cache.incr("missing")
    assert not redis_cache.has_key("missing")  # nothing created by the failed increment
    redis_cache.add("hits", 1, timeout=30)
    assert [redis_cache.incr("hits"), redis_cache.incr("hits", 5)] == [2, 7]
    assert redis_cache.get("hits") == 7
    raw = redis_cache._cache.get_client(write=True)
    assert 0 < raw.ttl(redis_cache.make_and_validate_key("hits")) <= 30  # the increment keeps the expiry


def test_an_increment_is_one_round_trip(redis_cache, redis_commands):
    redis_cache.add("hits", 1, timeout=30)
    redis_commands.clear()
    redis_cache.incr("hits")
    assert redis_commands == ["EVALSHA"], redis_commands


def test_one_client_serves_every_operation(redis_cache, monkeypatch):
    made = []
    original = redis.Redis.__init__

    def counted(self, *args, **kwargs):
        made.append(self)
        original(self, *args, **kwargs)
    monkeypatch.setattr(redis.Redis, "__init__", counted)
    for index in range(20):
        redis_cache.set(f"key-{index}", index, timeout=30)
        assert redis_cache.get(f"key-{index}") == index
        redis_cache.add(f"count-{index}", 0, timeout=30)
        redis_cache.incr(f"count-{index}")
    assert len(made) <= 1, made
