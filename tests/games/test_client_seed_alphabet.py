"""A new client seed keeps to the safe alphabet (ASCII letters and digits, then also - . _ ~; 1 to 64
characters): the field's validator, the API, the admin forms, the services and a CHECK in the database
refuse anything else. Pairs an earlier release made keep their seed, and still take updates."""

import importlib
import re

import pytest
from django.apps import apps
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from games import services
from games.models import SeedPair
from games.validators import CLIENT_SEED_PATTERN, is_safe_client_seed, validate_client_seed_field

pytestmark = pytest.mark.django_db

MIGRATION = importlib.import_module("games.migrations.0014_client_seed_alphabet")
SAFE = ["a", "0", "house-client-seed", "A.b_c~d-1", "x" * 64, "7pwXtJ6R"]
UNSAFE = ["", "-x", ".x", "~x", "_x", "a b", "';touch x;'", "$(id)", "`id`", "a\nb", "a\tb", "é", "Ünïcödé ♠",
          "a:b", "a/b", "x" * 65, "a\u202eb", "ａ", "a\x00", "a'b", 'a"b', "a;b", "a=b"]


@pytest.mark.parametrize("value", SAFE)
def test_the_alphabet_takes(value):
    validate_client_seed_field(value)
    assert is_safe_client_seed(value)
    assert MIGRATION.PATTERN == CLIENT_SEED_PATTERN


@pytest.mark.parametrize("value", UNSAFE, ids=repr)
def test_the_field_validator_refuses(value):
    with pytest.raises(ValidationError):
        validate_client_seed_field(value)
    assert not is_safe_client_seed(value)
    with pytest.raises(ValidationError):
        SeedPair(game_id=1, server_seed="a" * 64, server_seed_hash="b" * 64, client_seed=value).clean_fields(
            exclude=["game"])


@pytest.mark.parametrize("value", ["';touch x;'", "$(id)", "seed with spaces", "é"])
def test_the_services_refuse_and_write_nothing(operator, game, value):
    pairs = list(SeedPair.objects.values_list("pk", "client_seed"))
    with pytest.raises(ValidationError) as raised:
        services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation", client_seed=value)
    assert "client_seed" in raised.value.message_dict
    with pytest.raises(ValidationError):
        services.game_create(actor=operator, slug="other", name="Other", min_bet="1.00", max_bet="10.00",
                             client_seed=value)
    assert list(SeedPair.objects.values_list("pk", "client_seed")) == pairs


def _new_pair(game, client_seed):
    with transaction.atomic():
        return SeedPair.objects.create(game=game, server_seed="a" * 64, server_seed_hash="b" * 64,
                                       client_seed=client_seed, retired_at=timezone.now())


@pytest.mark.parametrize("value", ["';touch x;'", "a b", "é", "-x", "a\nb", "x;=1"], ids=repr)
def test_the_database_refuses_a_new_pair_outside_the_alphabet(game, value):
    with pytest.raises(IntegrityError, match="seed_pair_client_seed_safe_alphabet"):
        _new_pair(game, value)
    assert _new_pair(game, "A.b_c~d-1").pk


def _alter_table(*steps):
    """Run migration steps inside the test's transaction (its deferred foreign key checks done first:
    PostgreSQL alters no table with checks pending)."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    with connection.schema_editor() as editor:
        for step in steps:
            step(apps, editor)


def _constraint():
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_constraintdef(oid), convalidated FROM pg_constraint WHERE conname = %s",
                       [MIGRATION.CONSTRAINT])
        return cursor.fetchone()


@pytest.mark.owner  # altering the table is the owner's
def test_pairs_made_before_keep_their_seed_take_updates_and_are_not_carried_over(operator, integration, game):
    legacy = SeedPair.objects.get(game=game)
    _alter_table(MIGRATION.drop_check)
    SeedPair.objects.filter(pk=legacy.pk).update(client_seed="';touch x;' é")  # as an earlier release allowed
    _alter_table(MIGRATION.add_check)

    definition, validated = _constraint()
    assert validated, "checked against every row, not NOT VALID"
    assert re.search(rf"id <= {legacy.pk}\b", definition), definition
    # The old pair still opens rounds (its next nonce is updated) and is retired and revealed.
    round_ = services.round_open(game_id=game.pk, actor=integration)
    services.round_deal(round_id=round_.pk, actor=integration)
    retired, new = services.seed_rotate(game_id=game.pk, actor=operator, reason="rotation")
    retired.refresh_from_db()
    assert retired.pk == legacy.pk and retired.client_seed == "';touch x;' é" and retired.revealed_at
    assert re.fullmatch(r"[0-9a-f]{16}", new.client_seed), "an unsafe seed is not carried over: a random one"
    with pytest.raises(IntegrityError, match=MIGRATION.CONSTRAINT):
        _new_pair(game, "';touch x;' é")


@pytest.mark.owner
def test_with_no_pair_outside_the_alphabet_the_check_is_the_plain_rule(game):
    _alter_table(MIGRATION.drop_check, MIGRATION.add_check)
    definition, validated = _constraint()
    assert validated and "id <=" not in definition and "A-Za-z0-9" in definition
