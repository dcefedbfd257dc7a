from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("annotator", "0005_audit_imports_accounts"),
    ]

    operations = [
        migrations.AddField(
            model_name="project",
            name="conceal_policy",
            field=models.JSONField(
                blank=True, default=dict,
                help_text="PHI label -> concealment strategy (keep, pseudo, class, mask, remove); a label left out "
                          "takes its preset's default (pseudo)",
            ),
        ),
        migrations.AddField(
            model_name="project",
            name="surrogate_scope",
            field=models.CharField(
                choices=[("document", "per document"), ("project", "per project")], default="document",
                help_text="one surrogate per value within each document, or within the whole project",
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="project",
            name="age_bucket",
            field=models.PositiveSmallIntegerField(
                blank=True, default=90, null=True,
                help_text="ages of this many years or more become '90+' (empty: keep all)",
            ),
        ),
        migrations.AddField(
            model_name="project",
            name="review_confidence",
            field=models.FloatField(
                default=0.8, help_text="de-identified spans the model is less sure of than this are listed for review",
            ),
        ),
    ]
