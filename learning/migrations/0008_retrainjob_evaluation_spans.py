from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('learning', '0007_storedvocabulary'),
    ]

    operations = [
        migrations.AddField(
            model_name='retrainjob',
            name='evaluation_spans',
            field=models.JSONField(
                blank=True, default=dict,
                help_text='the spans the job\'s model predicted on each evaluation document, by the hash of its text',
            ),
        ),
    ]
