"""Money columns widened to NUMERIC(26, 8), every value kept; and the daily aggregates' amounts, kept
in cents until now, put in each game's own minor units (settlement.aggregates): the rows of a game
whose currency does not have two places are scaled (yen from cents, fils from cents, ...)."""

import wallet.fields
from django.db import migrations, models


def aggregates_in_minor_units(apps, schema_editor):
    from core.currencies import minor_places

    GameInstance = apps.get_model("games", "GameInstance")
    DailyBetTotals = apps.get_model("settlement", "DailyBetTotals")
    for game_id, currency in GameInstance.objects.values_list("pk", "currency"):
        places = minor_places(currency)
        if places == 2:
            continue
        rows = DailyBetTotals.objects.filter(game_id=game_id)
        for row in rows:
            row.handle_cents = _scaled(row.handle_cents, places)
            row.paid_out_cents = _scaled(row.paid_out_cents, places)
            row.save(update_fields=["handle_cents", "paid_out_cents"])


def _scaled(cents: int, places: int) -> int:
    if places > 2:
        return cents * 10 ** (places - 2)
    return (cents + 10 ** (2 - places) // 2) // 10 ** (2 - places)  # to the nearest, as the cents were


class Migration(migrations.Migration):

    dependencies = [
        ('games', '0017_money_in_currency_places'),
        ('settlement', '0010_money_range'),
    ]

    operations = [
        migrations.RunPython(aggregates_in_minor_units, migrations.RunPython.noop),
        migrations.AlterField(
            model_name='dailybettotals',
            name='handle_cents',
            field=models.BigIntegerField(default=0, help_text="Total staked, in minor units of the game's currency."),
        ),
        migrations.AlterField(
            model_name='dailybettotals',
            name='paid_out_cents',
            field=models.BigIntegerField(default=0, help_text='Total returned (stakes included), in minor units.'),
        ),
        migrations.AlterField(
            model_name='dailybettotals',
            name='expected_return_ucents',
            field=models.BigIntegerField(default=0, help_text="Σ stake × exact RTP of the bet's multiplier and shoe, in 10^-8 of the currency."),
        ),
        migrations.AlterField(
            model_name='settlementbatch',
            name='total_paid',
            field=wallet.fields.MoneyField(decimal_places=8, default=0, max_digits=26, verbose_name='total paid out'),
        ),
        migrations.AlterField(
            model_name='settlementbatch',
            name='total_staked',
            field=wallet.fields.MoneyField(decimal_places=8, default=0, max_digits=26, verbose_name='total staked'),
        ),
    ]
