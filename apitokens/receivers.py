"""A token row deleted (with its owner, or by hand) is an event of the authentication log."""

from django.contrib.auth import get_user_model
from django.db.models.signals import post_delete

from apitokens.models import ApiToken
from audit.choices import AuditAction, AuthOutcome
from audit.context import signal_actor
from audit.services import auth_event_record


def record_token_deleted(sender, instance, **kwargs):
    try:
        owner = instance.owner.get_username()
    except get_user_model().DoesNotExist:  # deleted with its owner
        owner = str(instance.owner_id)
    auth_event_record(actor=signal_actor("system:token-management"), action=AuditAction.TOKEN_DELETED,
                      outcome=AuthOutcome.TOKEN_DELETED, username=owner, details={"token_id": instance.pk})


def connect():
    post_delete.connect(record_token_deleted, sender=ApiToken, dispatch_uid="apitokens.token_deleted")
