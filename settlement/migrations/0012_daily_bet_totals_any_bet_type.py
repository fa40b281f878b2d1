"""The daily bet totals keep any registered bet type: the column as wide as the bets' own."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("settlement", "0011_money_eight_places"),
    ]

    operations = [
        migrations.AlterField(
            model_name="dailybettotals",
            name="bet_type",
            field=models.CharField(max_length=24),
        ),
    ]
