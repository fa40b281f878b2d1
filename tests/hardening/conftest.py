"""Fixtures of the hardening tests: an administrator's API client (a token of the write scope)."""

import pytest


@pytest.fixture
def as_admin(api_as, administrator):
    return api_as(administrator)
