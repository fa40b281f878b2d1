"""Audit events for changes that Django itself makes: staff users and their roles. (Log-ins are
recorded by the site's receivers, baccarat_site.receivers, which know the lock-outs; API tokens by
apitokens.)"""

from django.contrib.auth import get_user_model
from django.db.models.signals import m2m_changed, post_save, pre_save

from audit.choices import AuditAction
from audit.context import signal_actor
from audit.services import audit_record

User = get_user_model()
_WATCHED_USER_FIELDS = ("username", "is_active", "is_staff", "is_superuser")


def remember_user_before(sender, instance, **kwargs):
    before = User.objects.filter(pk=instance.pk).values(*_WATCHED_USER_FIELDS).first() if instance.pk else None
    instance._audit_before = before


def record_user_saved(sender, instance, created, **kwargs):
    after = {name: getattr(instance, name) for name in _WATCHED_USER_FIELDS}
    before = getattr(instance, "_audit_before", None)
    if created:
        audit_record(actor=signal_actor("system:user-management"), action=AuditAction.STAFF_CREATED, obj=instance,
                     after=after)
    elif before != after:
        audit_record(actor=signal_actor("system:user-management"), action=AuditAction.STAFF_CHANGED, obj=instance,
                     before=before, after=after)


def record_roles_changed(sender, instance, action, pk_set, model, **kwargs):
    if action not in ("post_add", "post_remove", "post_clear") or not isinstance(instance, User):
        return
    groups = sorted(instance.groups.values_list("name", flat=True))
    audit_record(actor=signal_actor("system:user-management"), action=AuditAction.STAFF_ROLES_CHANGED, obj=instance,
                 after={"groups": groups, "change": action.removeprefix("post_")})


def connect():
    pre_save.connect(remember_user_before, sender=User, dispatch_uid="audit.user.before")
    post_save.connect(record_user_saved, sender=User, dispatch_uid="audit.user.saved")
    m2m_changed.connect(record_roles_changed, sender=User.groups.through, dispatch_uid="audit.user.groups")
