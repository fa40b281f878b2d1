"""A delivery can be cancelled: its endpoint was disabled, or its client deactivated, before it was sent."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('webhooks', '0003_endpoint_url_rule'),
    ]

    operations = [
        migrations.AlterField(
            model_name='delivery',
            name='status',
            field=models.CharField(choices=[('pending', 'Pending'), ('delivered', 'Delivered'), ('failed', 'Failed (attempts exhausted)'), ('cancelled', 'Cancelled (its endpoint or client was disabled)')], default='pending', max_length=16),
        ),
        migrations.RemoveConstraint(
            model_name='delivery',
            name='webhook_delivery_status_valid',
        ),
        migrations.AddConstraint(
            model_name='delivery',
            constraint=models.CheckConstraint(condition=models.Q(('status__in', ['pending', 'delivered', 'failed', 'cancelled'])), name='webhook_delivery_status_valid'),
        ),
    ]
