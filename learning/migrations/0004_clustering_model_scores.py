"""Per-cluster scores of the current model, computed on a worker and stored on the clustering, so that the
clusters page reads them instead of loading the model."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('learning', '0003_clustering_simulationrun'),
    ]

    operations = [
        migrations.AddField(
            model_name='clustering',
            name='model_scores',
            field=models.JSONField(
                blank=True, default=dict,
                help_text="the current model on each cluster's evaluation documents, computed when the clustering "
                          "finished or the model was published: {model_version, clusters: {label: {documents, p, r, "
                          "f1, support}}, error}",
            ),
        ),
    ]
