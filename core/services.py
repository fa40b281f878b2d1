"""The update of a model instance's fields as every service writes it: set, validate, diff, save."""

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Update:
    """What an update changed, for its audit event: {name: value} of the changed values only,
    before and after (empty when nothing changed)."""

    before: dict
    after: dict

    def __bool__(self) -> bool:
        return bool(self.after)


def _values(changes: dict) -> Callable[[object], dict]:
    return lambda instance: {name: getattr(instance, name) for name in changes}


def _diff(before: dict, after: dict) -> Update:
    changed = [name for name in after if after[name] != before.get(name)]
    return Update(before={name: before.get(name) for name in changed}, after={name: after[name] for name in changed})


def model_diff(instance, changes: dict, *, view: Callable[[object], dict] | None = None) -> Update:
    """Set each of ``changes`` ({field name: value}) on ``instance`` (nothing is validated or saved) and
    return what that changes, as ``view(instance)`` reads the instance ({name: JSON-ready value}; by
    default the value of each field named in ``changes``)."""
    view = view or _values(changes)
    before = view(instance)
    for name, value in changes.items():
        setattr(instance, name, value)
    return _diff(before, view(instance))


def model_update(instance, changes: dict, *, view: Callable[[object], dict] | None = None,
                 check: Callable[[object], None] | None = None) -> Update:
    """Set ``changes`` on ``instance`` (locked by the caller), validate it in full (``full_clean``) and
    save only the fields whose value changed (with the ``auto_now`` ones), nothing when none did.

    Returns the diff for the audit event, as ``model_diff`` words it, once validated (the values as
    saved: "1.9" read back as Decimal("1.90")). ``check(instance)`` runs once the values are set,
    before the validation: to read what the validation needs as it stands (a related row under its
    lock), or to refuse the change.
    """
    meta = instance._meta
    fields = [meta.get_field(name) for name in changes]
    view = view or _values(changes)
    before = view(instance)
    stored = {field.attname: getattr(instance, field.attname) for field in fields}
    for name, value in changes.items():
        setattr(instance, name, value)
    if check is not None:
        check(instance)
    instance.full_clean()
    update_fields = [field.name for field in fields if getattr(instance, field.attname) != stored[field.attname]]
    if update_fields:
        instance.save(update_fields=[*update_fields, *(field.name for field in meta.concrete_fields
                                                       if getattr(field, "auto_now", False))])
    return _diff(before, view(instance))
