"""The lead's agreement page: how far annotators agree on the records two or more of them submitted."""
from __future__ import annotations

from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotator.permissions import Can, project_for
from learning.selectors.agreement import project_agreement


@require_GET
def agreement(request, project_id: int):
    project = project_for(request.user, project_id, Can.SEE_PEOPLE)
    figures = project_agreement(project=project)
    summary = figures["summary"]
    labels = [{"label": label, **values} for label, values in summary["per_label"].items() if values["spans"]]
    chart = {"days": figures["days"], "labels": labels}
    return render(request, "learning/agreement.html", {
        "project": project, "summary": summary, "overall": summary["overall"], "labels": labels,
        "records": figures["records"], "chart": chart,
    })
