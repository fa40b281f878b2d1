"""The shared kernel (core): application errors and their HTTP status, the update of a model's
fields, the money parser."""

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from audit.selectors import ProofError
from backoffice.api.exceptions import error_status_and_body
from core.errors import ApplicationError, Conflict
from core.money import parse_money
from core.services import model_diff, model_update
from games.models import GameInstance
from wallet.validators import validate_stake


class TestErrors:
    @pytest.mark.parametrize("error,status", [
        (Conflict("round", "The round is dealt."), 409),
        (ProofError("tree_size", "The log holds 3 events."), 409),
        (ApplicationError("stake", "Too small."), 400),
        (ValidationError({"stake": "Too small."}), 400),
    ])
    def test_each_is_mapped_to_its_status_naming_the_field(self, error, status):
        code, body = error_status_and_body(error)
        assert code == status and list(body) == [getattr(error, "field", "stake")]

    def test_anything_else_is_left_to_drf(self):
        assert error_status_and_body(ValueError("x")) is None

    def test_a_conflict_keeps_its_code(self):
        assert Conflict("round", "x").code == "conflict" and Conflict("round", "x", code="held").code == "held"


class TestMoney:
    @pytest.mark.parametrize("value,amount", [("10.50", "10.5"), (10, "10"), (Decimal("10.5"), "10.5")])
    def test_decimal_strings_ints_and_decimals(self, value, amount):
        assert parse_money(value, field="stake") == Decimal(amount)

    @pytest.mark.parametrize("value,message", [
        (10.5, "decimal string"), (True, "decimal string"), ("ten", "decimal number"), ("NaN", "finite"),
        ("Infinity", "finite"), ("0.000000001", "decimal places"),  # 9: more than any currency has
    ])
    def test_anything_else_is_refused_naming_the_field(self, value, message):
        with pytest.raises(ValidationError) as refused:
            parse_money(value, field="stake", validator=validate_stake)
        assert list(refused.value.message_dict) == ["stake"]
        assert message in " ".join(refused.value.message_dict["stake"]), refused.value.message_dict


@pytest.mark.django_db
class TestModelUpdate:
    def test_saves_only_what_changed_and_returns_the_diff(self, game):
        with CaptureQueriesContext(connection) as queries:
            update = model_update(game, {"name": "Salon", "decks": game.decks}, view=GameInstance.configuration)
        assert update.before == {"name": "Main table"} and update.after == {"name": "Salon"}
        [sql] = [query["sql"] for query in queries.captured_queries if query["sql"].startswith("UPDATE")]
        assert '"name"' in sql and '"updated_at"' in sql and '"decks"' not in sql
        assert GameInstance.objects.get().name == "Salon"

    def test_nothing_changed_nothing_saved(self, game):
        with CaptureQueriesContext(connection) as queries:
            assert not model_update(game, {"max_bet": "1000.0"})  # the same amount, written otherwise
        assert not [query for query in queries.captured_queries if query["sql"].startswith("UPDATE")]

    def test_validated_in_full_and_checked_before_saving(self, game):
        with pytest.raises(ValidationError) as refused:
            model_update(game, {"min_bet": Decimal("5000.00")})
        assert "max_bet" in refused.value.message_dict  # the model's clean(), not only the field's

        def check(instance):
            raise Conflict("name", "Not now.")

        with pytest.raises(Conflict):
            model_update(game, {"name": "Salon"}, check=check)
        assert GameInstance.objects.get().name == "Main table"

    def test_a_diff_alone_saves_nothing(self, game):
        diff = model_diff(game, {"tie_multiplier": Decimal("8.5")}, view=GameInstance.configuration)
        assert diff.before == {"tie_multiplier": "9.0000"} and diff.after == {"tie_multiplier": "8.5000"}
        assert GameInstance.objects.get().tie_multiplier == Decimal("9")
