from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('annotator', '0007_adjudication'),
    ]

    operations = [
        migrations.AddField(
            model_name='project',
            name='label_styles',
            field=models.JSONField(blank=True, default=dict, help_text='label -> its colour and shortcut key'),
        ),
        migrations.AddField(
            model_name='importjob',
            name='evaluation_share',
            field=models.FloatField(default=0.0, help_text='the share of the new records set aside at random as the evaluation set'),
        ),
    ]
