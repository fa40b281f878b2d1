"""A token's one successor (``rotated_from``: a token is rotated once), and labels without control
characters or bidirectional overrides: any such character a label already holds becomes a space
before the constraint is added."""

import apitokens.models
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('apitokens', '0002_digests_from_authtoken'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunSQL(
            sql=[("UPDATE apitokens_apitoken SET label = regexp_replace(label, %s, ' ', 'g') WHERE label ~ %s",
                  [apitokens.models.MISLEADING_LABEL_CHARACTERS] * 2)],
            reverse_sql=migrations.RunSQL.noop,
        ),
        migrations.AddField(
            model_name='apitoken',
            name='rotated_from',
            field=models.OneToOneField(blank=True, editable=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='rotated_to', to='apitokens.apitoken'),
        ),
        migrations.AlterField(
            model_name='apitoken',
            name='label',
            field=models.CharField(blank=True, help_text='What the token is for (a server, a script).', max_length=100, validators=[apitokens.models.validate_label]),
        ),
        migrations.AddConstraint(
            model_name='apitoken',
            constraint=models.CheckConstraint(condition=models.Q(('label__regex', '[\\x01-\\x1f\\x7f-\\x9f\\u202a-\\u202e\\u2066-\\u2069]'), _negated=True), name='apitoken_label_printable'),
        ),
    ]
