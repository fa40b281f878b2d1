"""The admin lists' row checkboxes written directly (docs/decisions/0010) are Django's, to the byte."""

import re
from decimal import Decimal

import pytest
from django.contrib import admin

from games.models import Bet, GameInstance, Round
from tests.admin.helpers import admin_url


def _both(settings, model_admin, obj) -> tuple:
    settings.ADMIN_DIRECT_CHECKBOXES = True
    direct = model_admin.action_checkbox(obj)
    settings.ADMIN_DIRECT_CHECKBOXES = False
    return direct, model_admin.action_checkbox(obj)


@pytest.mark.django_db
def test_a_checkbox_is_djangos_whatever_the_objects_name(settings, game):
    model_admin = admin.site._registry[GameInstance]
    for name in ('Tom & Jerry\'s "<b>table</b>"', "Ünïcödé 龍 table", "plain"):
        GameInstance.objects.filter(pk=game.pk).update(name=name)
        direct, plain = _both(settings, model_admin, GameInstance.objects.get(pk=game.pk))
        assert direct == plain and 'class="action-select"' in direct
        assert "<b>" not in direct  # the name is escaped, as Django escapes it


def _result_table(page: str) -> str:
    return re.search(r'<table id="result_list">.*?</table>', page, re.S).group(0)


@pytest.mark.django_db
def test_the_bets_and_rounds_lists_are_the_same_page_either_way(settings, as_admin, play, player):
    for _ in range(3):
        play([(player, "BANKER", Decimal("10.00")), (player, "TIE", Decimal("1.00"))])
    tables = {}
    for direct in (True, False):
        settings.ADMIN_DIRECT_CHECKBOXES = direct
        tables[direct] = [_result_table(as_admin.get(admin_url(model)).content.decode()) for model in (Bet, Round)]
    assert tables[True] == tables[False]
    assert all(table.count('class="action-select"') >= 3 for table in tables[True])
