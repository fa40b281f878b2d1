from django.db import DEFAULT_DB_ALIAS

from apitokens.models import ApiToken


def token_list(*, owner=None, using: str = DEFAULT_DB_ALIAS):
    """Tokens, newest first, with their owners; ``owner``'s only when given."""
    tokens = ApiToken.objects.using(using).select_related("owner").order_by("-id")
    return tokens.filter(owner=owner) if owner is not None else tokens


def token_get(*, token_id: int, using: str = DEFAULT_DB_ALIAS) -> ApiToken:
    """The token (ApiToken.DoesNotExist: a 404 in the API)."""
    return ApiToken.objects.using(using).select_related("owner").get(pk=token_id)
