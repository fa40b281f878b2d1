"""Row locks on accounts, FOR UPDATE: always by id, ascending (their place in the order, and why
FOR UPDATE, is in games/locks.py)."""

from django.db import DEFAULT_DB_ALIAS

from wallet.models import Account


def lock_accounts(account_ids, using: str = DEFAULT_DB_ALIAS) -> dict:
    accounts = Account.objects.using(using).select_for_update().filter(pk__in=set(account_ids)).order_by("pk")
    return {account.pk: account for account in accounts}


def lock_account_balances(account_ids, using: str = DEFAULT_DB_ALIAS) -> dict:
    """Lock accounts (by id, ascending) and return {id: balance}."""
    rows = Account.objects.using(using).select_for_update().filter(pk__in=set(account_ids)).order_by("pk")
    return dict(rows.values_list("pk", "balance"))


def lock_accounts_by_external_id(external_ids, using: str = DEFAULT_DB_ALIAS) -> dict:
    """Lock the accounts of these external ids (by id, ascending) and return {external id: account}."""
    accounts = Account.objects.using(using).select_for_update().filter(external_id__in=set(external_ids)).order_by("pk")
    return {account.external_id: account for account in accounts}
