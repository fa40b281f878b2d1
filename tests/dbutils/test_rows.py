"""dbutils.rows: rows of a hand-written statement loaded as the ORM loads them."""

import pytest
from django.db import connection

from dbutils.rows import row_loader
from wallet.models import Account

pytestmark = pytest.mark.django_db


def test_a_row_loads_its_fields_and_defers_the_rest():
    made = Account.objects.create(external_id="rows-1", currency="EUR", balance="12.50")
    fields = [Account._meta.get_field(name) for name in ("id", "external_id", "balance")]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id, external_id, balance FROM {Account._meta.db_table} WHERE id = %s", [made.pk])
        account = row_loader(Account, fields, 0)(cursor.fetchone())
    assert (account.pk, account.external_id, str(account.balance)) == (made.pk, "rows-1", "12.50")
    assert account.get_deferred_fields() == {"currency", "created_at"}
    assert account.currency == "EUR"  # a deferred field is read on first use


def test_fields_out_of_the_model_s_order_are_refused():
    # Model.from_db reads values in the model's field order: another order would load them crossed.
    fields = [Account._meta.get_field(name) for name in ("balance", "id")]
    with pytest.raises(ValueError, match="model's order"):
        row_loader(Account, fields, 0)
