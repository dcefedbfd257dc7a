import pytest
from learning.costs import cost_fits
from learning.models import ModelVersion
from annotator.selectors import cost_records, gold_documents
from tests.seeding import seed_dashboard_project

pytestmark = pytest.mark.django_db

def test_explore():
    import time; t=time.time()
    seeded = seed_dashboard_project(password="pw", batches=3, batch_size=6, simulate=False)
    print("seed", time.time()-t)
    for v in ModelVersion.objects.filter(project=seeded.project).order_by("created_at"):
        print(v.n_documents, v.status, v.metrics.get("entity"), v.metrics.get("token"), list(v.metrics))
    fits = cost_fits(project=seeded.project)
    print(fits)
    for r in cost_records(project=seeded.project): print(r)
    g = gold_documents(project=seeded.project)
    print(len(g), sum(len(d.spans) for d in g)/len(g))
    g = gold_documents(project=seeded.project, include_evaluation=False)
    print(len(g), sum(len(d.spans) for d in g)/len(g))
