"""The learning dashboard for leads: the project's learning curves, its model versions, and simulations of
the query strategies on its own annotated documents (started here, run by a worker, followed live)."""
from __future__ import annotations

from django.contrib import messages
from django.db import transaction
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_POST

from annotator.permissions import Can, managed_project, project_for
from learning.forms.dashboard import SimulationForm
from learning.selectors.dashboard import dashboard_state, model_version_state, project_simulation, simulation_summary
from learning.services.simulations import SimulationError, request_simulation
from learning.tasks import simulate_project


def _simulation_id(request) -> int | None:
    value = request.GET.get("simulation", "")
    return int(value) if value.isdigit() else None


def _render_dashboard(request, project, form: SimulationForm, *, simulation_id: int | None = None, status: int = 200):
    context = {"project": project, "form": form, **dashboard_state(project=project, simulation_id=simulation_id)}
    return render(request, "learning/dashboard.html", context, status=status)


@require_GET
def dashboard(request, project_id: int):
    project = project_for(request.user, project_id, Can.SEE_MODEL)
    return _render_dashboard(request, project, SimulationForm(), simulation_id=_simulation_id(request))


@require_GET
def model_version(request, project_id: int, version_id: int):
    project = project_for(request.user, project_id, Can.SEE_MODEL)
    return render(request, "learning/model_version.html",
                  {"project": project, **model_version_state(project=project, version_id=version_id)})


@require_POST
def start_simulation(request, project_id: int):
    project = managed_project(request.user, project_id)
    form = SimulationForm(request.POST)
    if form.is_valid():
        try:
            run = request_simulation(project=project, user=request.user, **form.simulation_request())
        except (SimulationError, ValueError) as error:  # an unknown strategy is a ValueError of the core
            form.add_error(None, str(error))
        else:
            transaction.on_commit(lambda: simulate_project.delay(run.pk))
            messages.success(request, gettext("Simulation #%(number)s is queued; this page follows it.") % {"number": run.pk})
            url = reverse("learning:dashboard", args=[project.pk])
            return redirect(f"{url}?simulation={run.pk}#simulation")
    return _render_dashboard(request, project, form, status=400)


@require_GET
def simulation(request, project_id: int, run_id: int):
    """A simulation's progress or results: the fragment the dashboard polls, or the dashboard showing it."""
    project = project_for(request.user, project_id, Can.SEE_MODEL)
    run = project_simulation(project=project, run_id=run_id)
    if not request.htmx:
        url = reverse("learning:dashboard", args=[project.pk])
        return redirect(f"{url}?simulation={run.pk}#simulation")
    return render(request, "learning/_simulation.html", {"project": project, "shown": simulation_summary(run)})
