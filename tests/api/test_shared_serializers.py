"""The serializers the API shares between requests are safe: none of their fields reads the context.

backoffice.api.views keeps one serializer of each class per process, built without data or
context, and validates and represents every request's data with it (the bet's hot path). That is
safe while nothing of the serializer reads its context (the request, the view): a field that did
would find none, or, were a context ever given to the shared instance, another request's. The
proof reads the code each serializer of ours runs (its own methods and those of every field, nested
serializers, defaults and validators, DRF's included) for a read of ``context``; the last tests
show it catching such a field, and one swapped into a real serializer.
"""

import ast
import importlib
import inspect
import pkgutil
import textwrap

import pytest
from rest_framework import serializers

from backoffice.api.views import _shared

APPS = ("alerts", "approvals", "audit", "games", "settlement", "wallet", "webhooks", "backoffice")


def api_modules():
    for app in APPS:
        package = importlib.import_module(f"{app}.api")
        for info in pkgutil.iter_modules(package.__path__):
            yield importlib.import_module(f"{app}.api.{info.name}")


def our_serializers() -> dict:
    """{name: serializer} of every serializer class (as _shared builds it) and module-level serializer
    instance defined in our API modules."""
    found = {}
    for module in api_modules():
        for name, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, serializers.Serializer) and (
                    value.__module__ == module.__name__):
                found[f"{module.__name__}.{name}"] = _shared(value)
            elif isinstance(value, serializers.BaseSerializer):
                found[f"{module.__name__}.{name}"] = value
    return found


def _functions(obj):
    """The functions ``obj`` may run: its own if it is one, else those its class and bases define
    (properties' getters included); the ``context`` property itself excepted, the one read we look for."""
    if inspect.isfunction(obj) or inspect.ismethod(obj):
        yield obj
        return
    for cls in type(obj).__mro__:
        if cls is object:
            continue
        for name, member in vars(cls).items():
            if name == "context" and isinstance(member, property):
                continue
            member = member.fget if isinstance(member, property) else member
            member = getattr(member, "__func__", member)  # staticmethod, classmethod
            if inspect.isfunction(member):
                yield member


def _reads_context(function) -> bool:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    except (OSError, TypeError, SyntaxError):
        return False
    return any(isinstance(node, ast.Attribute) and node.attr in ("context", "_context")
               and isinstance(node.ctx, ast.Load) for node in ast.walk(tree))


def _parts(field, path):
    """(path, object whose code runs) for the field, its default, its validators and what it nests."""
    yield path, field
    default = getattr(field, "default", serializers.empty)
    if callable(default):
        yield f"{path} (default)", default
    for validator in getattr(field, "validators", []):
        yield f"{path} (validator {type(validator).__name__})", validator
    if isinstance(field, serializers.ListSerializer):
        yield from _parts(field.child, f"{path}[]")
    elif isinstance(field, serializers.Serializer):
        for name, child in field.fields.items():
            yield from _parts(child, f"{path}.{name}")
    elif isinstance(field, serializers.ManyRelatedField):
        yield from _parts(field.child_relation, f"{path}[]")
    elif isinstance(getattr(field, "child", None), serializers.Field):
        yield from _parts(field.child, f"{path}[]")


def context_readers(serializer, name: str = "serializer") -> list:
    """Where the serializer's code reads its context: ["path (function)", …]; empty when nowhere."""
    found = []
    for path, part in _parts(serializer, name):
        found += [f"{path} ({function.__qualname__})" for function in _functions(part) if _reads_context(function)]
    return found


def test_the_api_modules_and_their_serializers_are_found():
    found = our_serializers()
    assert "games.api.serializers.BetSerializer" in found and "games.api.serializers.BetPlaceSerializer" in found
    assert len(found) > 40


def test_no_serializer_of_ours_reads_its_context():
    readers = {name: found for name, serializer in our_serializers().items()
               if (found := context_readers(serializer, name))}
    assert not readers, ("These read their context, which the serializers shared by backoffice.api.views "
                         f"(_shared) never have: pass what they need as data, or do not share them. {readers}")


# --- The proof catches a field that reads the request --------------------------------------------

class RequestUser(serializers.CharField):
    def to_representation(self, value):
        return self.context["request"].user.get_username()


class Planted(serializers.Serializer):
    name = serializers.CharField()
    viewer = RequestUser(source="*")


class MethodReading(serializers.Serializer):
    mine = serializers.SerializerMethodField()

    def get_mine(self, obj):
        return obj.owner == self.context["request"].user


class Nested(serializers.Serializer):
    inner = Planted()
    items = Planted(many=True)


class Owned(serializers.Serializer):
    owner = serializers.HiddenField(default=serializers.CurrentUserDefault())


class Linked(serializers.Serializer):
    link = serializers.HyperlinkedIdentityField(view_name="anything")


@pytest.mark.parametrize("serializer,where", [
    (Planted(), "serializer.viewer (RequestUser.to_representation)"),
    (MethodReading(), "serializer (MethodReading.get_mine)"),
    (Nested(), "serializer.inner.viewer (RequestUser.to_representation)"),
    (Nested(), "serializer.items[].viewer (RequestUser.to_representation)"),
    (Owned(), "serializer.owner (default) (CurrentUserDefault.__call__)"),
    (Linked(), "serializer.link (HyperlinkedRelatedField.to_representation)"),
])
def test_a_field_reading_the_request_is_caught(serializer, where):
    assert where in context_readers(serializer)


def test_a_reader_swapped_into_a_shared_serializer_is_caught(monkeypatch):
    from games.api import serializers as game_serializers

    cls = game_serializers.BetSerializer
    monkeypatch.setattr(cls, "_declared_fields", {**cls._declared_fields, "viewer": RequestUser(source="*")})
    monkeypatch.setattr(cls.Meta, "fields", [*cls.Meta.fields, "viewer"])
    _shared.cache_clear()
    try:
        shared = _shared(cls)
        assert context_readers(shared, "BetSerializer") == ["BetSerializer.viewer (RequestUser.to_representation)"]
        with pytest.raises(KeyError):  # as it would fail at the first bet: the shared serializer has no request
            shared.fields["viewer"].to_representation(object())
        assert not context_readers(game_serializers.BetPlaceSerializer(), "BetPlaceSerializer")
    finally:
        _shared.cache_clear()
