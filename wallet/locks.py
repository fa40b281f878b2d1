"""Row locks on accounts: always by id, ascending (their place in the order is in games/locks.py)."""

from wallet.models import Account


def lock_accounts(account_ids) -> dict:
    accounts = Account.objects.select_for_update().filter(pk__in=set(account_ids)).order_by("pk")
    return {account.pk: account for account in accounts}


def lock_account_balances(account_ids) -> dict:
    """Lock accounts (by id, ascending) and return {id: balance}."""
    rows = Account.objects.select_for_update().filter(pk__in=set(account_ids)).order_by("pk")
    return dict(rows.values_list("pk", "balance"))


def lock_accounts_by_external_id(external_ids) -> dict:
    """Lock the accounts of these external ids (by id, ascending) and return {external id: account}."""
    accounts = Account.objects.select_for_update().filter(external_id__in=set(external_ids)).order_by("pk")
    return {account.external_id: account for account in accounts}
