"""Who and where a change comes from, for the events it causes.

The request middleware sets the request's id, source IP and user; a command names itself with
``acting_as``. Services read them through ``request_meta`` and ``signal_actor``.
"""

import contextvars
from contextlib import contextmanager
from types import MappingProxyType

_NO_REQUEST = MappingProxyType({"request_id": "", "source_ip": None})
_request_meta = contextvars.ContextVar("audit_request_meta", default=_NO_REQUEST)
_request_user = contextvars.ContextVar("audit_request_user", default=None)
_acting_as = contextvars.ContextVar("audit_acting_as", default=None)
_user_agent = contextvars.ContextVar("audit_user_agent", default="")
USER_AGENT_CHARS = 256  # a user agent is kept (authentication log) cut to this length


@contextmanager
def request_context(request_id: str, source_ip: str | None, user=None, user_agent: str = ""):
    meta_token = _request_meta.set({"request_id": request_id, "source_ip": source_ip})
    user_token = _request_user.set(user)
    agent_token = _user_agent.set(str(user_agent or "")[:USER_AGENT_CHARS])
    try:
        yield
    finally:
        _request_meta.reset(meta_token)
        _request_user.reset(user_token)
        _user_agent.reset(agent_token)


def request_user_agent() -> str:
    """The User-Agent of the request being served, cut to USER_AGENT_CHARS (blank outside a request)."""
    return _user_agent.get()


def request_meta() -> dict:
    """The request id and source IP of the request being served (blank outside a request)."""
    return dict(_request_meta.get())


@contextmanager
def acting_as(actor: str):
    """Name the system component behind changes that Django's signals record (a command, say)."""
    token = _acting_as.set(actor)
    try:
        yield
    finally:
        _acting_as.reset(token)


def signal_actor(default: str):
    """Who made a change seen through a signal: a named component, the request's user, or ``default``."""
    user = _request_user.get()
    return _acting_as.get() or (user if user is not None and user.is_authenticated else default)
