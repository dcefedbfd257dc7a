"""The stylometric clusters page: the project's clusters, their share of the annotated set and the current
model's scores per cluster, for every member; leads recompute them (here and now for small projects, on a
worker for large ones)."""
from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect, render
from django.utils.timesince import timesince
from django.utils.translation import gettext, ngettext

from annotator.models import Document
from annotator.permissions import Can, allows, managed_project, project_for
from learning.models import Clustering
from learning.selectors import clusters as selectors
from learning.services import clustering as service
from learning.tasks import enqueue_clustering


def clusters(request, project_id: int):
    if request.method == "POST":
        project = managed_project(request.user, project_id)
        _recompute(request, project)
        return redirect("learning:clusters", project_id=project.pk)
    project = project_for(request.user, project_id, Can.SEE_MODEL)
    return render(request, "learning/clusters.html", {
        "project": project,
        "overview": selectors.cluster_overview(project),
        "can_manage": allows(user=request.user, project=project, action=Can.MANAGE),
        "n_documents": Document.objects.filter(project=project).count(),
        "sync_limit": selectors.SYNC_LIMIT,
        "in_request": selectors.runs_in_request(project),
    })


def _recompute(request, project) -> None:
    clustering, created = service.request_clustering(project=project)
    if not created:
        messages.info(request, gettext("A clustering is already %(status)s (asked %(since)s ago); this page shows it when "
                               "it ends.") % {"status": clustering.get_status_display().lower(),
                                              "since": timesince(clustering.created_at)})
    elif selectors.runs_in_request(project):
        clustering = service.run_clustering(clustering.pk) or clustering
        if clustering.status == Clustering.Status.DONE:
            messages.success(request, ngettext("Clustered %(documents)s documents into %(k)s cluster.",
                                               "Clustered %(documents)s documents into %(k)s clusters.", clustering.k)
                             % {"documents": len(clustering.labels), "k": clustering.k})
        else:
            messages.error(request, gettext("The clustering failed: %(error)s") % {"error": clustering.error})
    else:
        enqueue_clustering(clustering)
        messages.success(request, gettext("The clustering is queued for a worker; reload this page in a few minutes."))
