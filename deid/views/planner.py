"""The release planner page (ALGORITHMS.md §7): the project's measured curve and costs in the publisher–attacker
game, with the parameters in the query string so that a plan can be bookmarked and shared."""
from __future__ import annotations

from django.shortcuts import render

from annotator.permissions import managed_project
from deid.forms.planner import PlannerForm
from deid.selectors.planner import MIN_CURVE_POINTS, PlannerError, planner_inputs, release_plan


def planner(request, project_id: int):
    project = managed_project(request.user, project_id)
    inputs = planner_inputs(project=project)
    form = PlannerForm.for_project(inputs, request.GET)
    result, error = None, None
    if inputs.can_fit and form.is_valid():
        try:
            result = release_plan(inputs=inputs, settings=form.settings())
        except PlannerError as problem:
            error = str(problem)
    error_fields = [form[name].label for name in form.errors if name in form.fields]
    return render(request, "deid/planner.html", {
        "project": project, "inputs": inputs, "form": form, "result": result, "error": error,
        "error_fields": error_fields,
        "min_curve_points": MIN_CURVE_POINTS,
    })
