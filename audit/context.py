"""Who and where a change comes from, for the events it causes and the log lines it writes.

The request middleware sets the request's id, source IP and user; a command names itself with
``acting_as``. Services read them through ``request_meta`` and ``signal_actor``, and name what they
act on for the log (``log_context``: game, round, bet). A task carries the request's id and log
context to its worker in its headers (audit.task_context), so the worker's lines and events name it.
"""

import contextvars
import re
from contextlib import contextmanager
from types import MappingProxyType

from django.utils.functional import LazyObject, empty

_NO_REQUEST = MappingProxyType({"request_id": "", "source_ip": None})
_request_meta = contextvars.ContextVar("audit_request_meta", default=_NO_REQUEST)
_request_user = contextvars.ContextVar("audit_request_user", default=None)
_acting_as = contextvars.ContextVar("audit_acting_as", default=None)
_user_agent = contextvars.ContextVar("audit_user_agent", default="")
_http_request = contextvars.ContextVar("audit_http_request", default=None)
# What the request or task is about, for its log lines; None outside either (nothing to attach to).
_log_fields = contextvars.ContextVar("audit_log_fields", default=None)
USER_AGENT_CHARS = 256  # a user agent is kept (authentication log) cut to this length
# What the database cannot store in an event (a NUL, a lone surrogate) nor a reader should see
# (other control characters): replaced in a user agent, which the client writes as it likes.
_UNKEPT_IN_USER_AGENT = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")  # fits AuditEvent.request_id; nothing a log could misread
LOG_FIELDS = ("user", "game", "round", "bet")


@contextmanager
def request_context(request_id: str, source_ip: str | None, user=None, user_agent: str = "", request=None):
    meta_token = _request_meta.set({"request_id": request_id, "source_ip": source_ip})
    user_token = _request_user.set(user)
    agent_token = _user_agent.set(_UNKEPT_IN_USER_AGENT.sub("\ufffd", str(user_agent or "")[:USER_AGENT_CHARS]))
    request_token = _http_request.set(request)
    fields_token = _log_fields.set({})
    try:
        yield
    finally:
        _request_meta.reset(meta_token)
        _request_user.reset(user_token)
        _user_agent.reset(agent_token)
        _http_request.reset(request_token)
        _log_fields.reset(fields_token)


def log_context(**fields) -> None:
    """Name what the request or task being served acts on (``game``, ``round``, ``bet``: ids) on
    every later log line of it. Outside a request or task, nothing (a command's lines name none)."""
    current = _log_fields.get()
    if current is not None:
        current.update((name, value) for name, value in fields.items() if value is not None)


def _username(user) -> str:
    """The name of a user already known, never loading one (a session's lazy user not yet read)."""
    if isinstance(user, LazyObject):
        user = user._wrapped
        if user is empty:
            return ""
    return user.get_username() if user is not None and getattr(user, "is_authenticated", False) else ""


def log_fields() -> dict:
    """What a log line written now can say of its request or task: ``request_id``, ``user`` (the
    name; DRF sets a token's user on the request once it has authenticated it) and the fields of
    ``log_context``, those known only."""
    fields = dict(_log_fields.get() or {})
    request_id = _request_meta.get()["request_id"]
    if request_id:
        fields["request_id"] = request_id
    request = _http_request.get()
    user = _username(request.__dict__.get("user") if request is not None else _request_user.get())
    if user:
        fields["user"] = user
    return fields


def task_context_start(carried) -> None:
    """In a worker, before a task runs: the request id and log context it carries (checked: they
    come through the broker), and nothing of the task run before it in this process."""
    carried = carried if isinstance(carried, dict) else {}
    request_id = carried.get("request_id")
    _request_meta.set({"request_id": request_id if isinstance(request_id, str) and REQUEST_ID.match(request_id)
                       else "", "source_ip": None})
    _request_user.set(None)
    _http_request.set(None)
    _log_fields.set({name: carried[name] for name in LOG_FIELDS if _loggable(carried.get(name))})


def _loggable(value) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool) and len(str(value)) <= 150


def task_context_end() -> None:
    _request_meta.set(_NO_REQUEST)
    _log_fields.set(None)


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
