"""Money at up to 8 places, each currency at its own (core.currencies): the money columns widened
from NUMERIC(20, 2) to NUMERIC(26, 8), every value kept exactly (18 digits before the point, as
before); currency codes of 3 to 8 characters (a configured BTC, USDT); and the database's check
that a game's limits have no more places than its ISO 4217 currency.

A game's limits stored before with more places than its currency has (say a JPY table's minimum of
0.50) are brought within them first, never widening the range: the minimum up, the maximum down."""

from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal

import django.db.models.functions.math
import wallet.validators
import wallet.fields
from django.db import migrations, models


def limits_within_places(apps, schema_editor):
    from core.currencies import ISO_4217

    GameInstance = apps.get_model("games", "GameInstance")
    for game in GameInstance.objects.filter(currency__in=[code for code, places in ISO_4217.items() if places < 8]):
        unit = Decimal(1).scaleb(-ISO_4217[game.currency])
        low, high = game.min_bet.quantize(unit, ROUND_CEILING), game.max_bet.quantize(unit, ROUND_FLOOR)
        if (low, high) != (game.min_bet, game.max_bet):
            GameInstance.objects.filter(pk=game.pk).update(min_bet=low, max_bet=max(high, low))


class Migration(migrations.Migration):

    dependencies = [
        ('games', '0016_bets_partitioned_by_month'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='gameinstance',
            name='game_currency_iso4217',
        ),
        migrations.AlterField(
            model_name='bet',
            name='payout',
            field=wallet.fields.MoneyField(blank=True, decimal_places=8, help_text='Returned, stake included.', max_digits=26, null=True, verbose_name='payout'),
        ),
        migrations.AlterField(
            model_name='bet',
            name='stake',
            field=wallet.fields.MoneyField(decimal_places=8, max_digits=26, validators=[wallet.validators.validate_stake], verbose_name='stake'),
        ),
        migrations.AlterField(
            model_name='gameinstance',
            name='currency',
            field=models.CharField(default='USD', help_text='ISO 4217, or a code of settings.CURRENCY_MINOR_UNITS; the bet limits and stakes have at most its decimal places.', max_length=8, validators=[wallet.validators.validate_currency]),
        ),
        migrations.AlterField(
            model_name='gameinstance',
            name='max_bet',
            field=wallet.fields.MoneyField(decimal_places=8, help_text='At most 1000000.00.', max_digits=26, validators=[wallet.validators.validate_stake], verbose_name='maximum bet'),
        ),
        migrations.AlterField(
            model_name='gameinstance',
            name='min_bet',
            field=wallet.fields.MoneyField(decimal_places=8, max_digits=26, validators=[wallet.validators.validate_stake], verbose_name='minimum bet'),
        ),
        migrations.RunPython(limits_within_places, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name='gameinstance',
            constraint=models.CheckConstraint(condition=models.Q(('currency__regex', '^[A-Z][A-Z0-9]{2,7}$')), name='game_currency_code'),
        ),
        migrations.AddConstraint(
            model_name='gameinstance',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('currency__in', ['BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF']), _negated=True), models.Q(('max_bet', django.db.models.functions.math.Round('max_bet', 0)), ('min_bet', django.db.models.functions.math.Round('min_bet', 0))), _connector='OR'), name='game_limits_in_0_places'),
        ),
        migrations.AddConstraint(
            model_name='gameinstance',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('currency__in', ['AED', 'AFN', 'ALL', 'AMD', 'ANG', 'AOA', 'ARS', 'AUD', 'AWG', 'AZN', 'BAM', 'BBD', 'BDT', 'BGN', 'BMD', 'BND', 'BOB', 'BOV', 'BRL', 'BSD', 'BTN', 'BWP', 'BYN', 'BZD', 'CAD', 'CDF', 'CHE', 'CHF', 'CHW', 'CNY', 'COP', 'COU', 'CRC', 'CUC', 'CUP', 'CVE', 'CZK', 'DKK', 'DOP', 'DZD', 'EGP', 'ERN', 'ETB', 'EUR', 'FJD', 'FKP', 'GBP', 'GEL', 'GHS', 'GIP', 'GMD', 'GTQ', 'GYD', 'HKD', 'HNL', 'HTG', 'HUF', 'IDR', 'ILS', 'INR', 'IRR', 'JMD', 'KES', 'KGS', 'KHR', 'KPW', 'KYD', 'KZT', 'LAK', 'LBP', 'LKR', 'LRD', 'LSL', 'MAD', 'MDL', 'MGA', 'MKD', 'MMK', 'MNT', 'MOP', 'MRU', 'MUR', 'MVR', 'MWK', 'MXN', 'MXV', 'MYR', 'MZN', 'NAD', 'NGN', 'NIO', 'NOK', 'NPR', 'NZD', 'PAB', 'PEN', 'PGK', 'PHP', 'PKR', 'PLN', 'QAR', 'RON', 'RSD', 'RUB', 'SAR', 'SBD', 'SCR', 'SDG', 'SEK', 'SGD', 'SHP', 'SLE', 'SLL', 'SOS', 'SRD', 'SSP', 'STN', 'SVC', 'SYP', 'SZL', 'THB', 'TJS', 'TMT', 'TOP', 'TRY', 'TTD', 'TWD', 'TZS', 'UAH', 'USD', 'USN', 'UYU', 'UZS', 'VED', 'VES', 'WST', 'XCD', 'XCG', 'YER', 'ZAR', 'ZMW', 'ZWG', 'ZWL']), _negated=True), models.Q(('max_bet', django.db.models.functions.math.Round('max_bet', 2)), ('min_bet', django.db.models.functions.math.Round('min_bet', 2))), _connector='OR'), name='game_limits_in_2_places'),
        ),
        migrations.AddConstraint(
            model_name='gameinstance',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('currency__in', ['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND']), _negated=True), models.Q(('max_bet', django.db.models.functions.math.Round('max_bet', 3)), ('min_bet', django.db.models.functions.math.Round('min_bet', 3))), _connector='OR'), name='game_limits_in_3_places'),
        ),
        migrations.AddConstraint(
            model_name='gameinstance',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('currency__in', ['CLF', 'UYW']), _negated=True), models.Q(('max_bet', django.db.models.functions.math.Round('max_bet', 4)), ('min_bet', django.db.models.functions.math.Round('min_bet', 4))), _connector='OR'), name='game_limits_in_4_places'),
        ),
    ]
