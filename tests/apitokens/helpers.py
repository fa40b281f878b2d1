from apitokens import digests
from apitokens.models import ApiToken


def token_of(secret: str) -> ApiToken | None:
    """The row a token (as printed once) is kept as: found by its digest alone."""
    return ApiToken.objects.select_related("owner").filter(digest=digests.digest(secret)).first()
