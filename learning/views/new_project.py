"""The "New project" page: a site administrator (or a lead, where the site allows it) creates a project, then
goes on to import its records. It lives in the learning app because it offers the learning core's taggers and
strategies; the project is created by annotator's service."""
from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_http_methods

from annotator.permissions import require_project_creator
from annotator.services.projects import ProjectError, create_project
from learning.forms.new_project import NewProjectForm


@require_http_methods(["GET", "POST"])
def new_project(request):
    require_project_creator(request.user)
    form = NewProjectForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            project = create_project(**form.project_arguments(), created_by=request.user, audited=True)
        except ProjectError as error:  # e.g. the same name, created by someone else a moment ago
            form.add_error(None, str(error))
        else:
            messages.success(request, gettext("Project %(name)s created with %(labels)s labels. Import its records: a "
                                              "share of them can be set aside for evaluation.")
                             % {"name": project.name, "labels": len(project.labels)})
            return redirect("annotator:project-import", project_id=project.pk)
    return render(request, "learning/new_project.html", {"form": form},
                  status=400 if request.method == "POST" else 200)
