"""The loop's page for leads: the current model, a retrain under way (kept live over the websocket), the
settings the next retrain will use, the measured costs and the top of the ranking."""
from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotator.permissions import managed_project
from annotator.selectors import settings_history
from annotator.services.projects import update_settings
from learning.forms.loop import LoopSettingsForm
from learning.selectors.loop import loop_state
from learning.tasks import request_deid_model, request_lead_retrain


@require_http_methods(["GET", "POST"])
def loop(request, project_id: int):
    project = managed_project(request.user, project_id)
    if request.method == "POST":
        form = LoopSettingsForm(request.POST, request.FILES, project=project)
    else:
        form = LoopSettingsForm(project=project)
    if request.method == "POST" and form.is_valid():
        changed = update_settings(project=project, user=request.user, changes=form.changes())
        if changed:
            messages.success(request, gettext("Saved (%(settings)s); the next retrain uses them.")
                             % {"settings": ", ".join(sorted(changed))})
        else:
            messages.info(request, gettext("Nothing changed."))
        return redirect("learning:loop", project_id=project.pk)
    if request.htmx and request.method == "GET":
        return render(request, "learning/_loop_state.html", {"project": project, **loop_state(project=project)})
    return render(request, "learning/loop.html", {
        "project": project, "form": form, "history": settings_history(project=project),
        **loop_state(project=project),
    }, status=400 if request.method == "POST" else 200)


@require_GET
def loop_parameters(request, project_id: int):
    """The fields of the tagger (``?tagger_kind=``) or strategy (``?strategy=``) a lead has just chosen."""
    project = managed_project(request.user, project_id)
    kind, strategy = request.GET.get("tagger_kind"), request.GET.get("strategy")
    form = LoopSettingsForm(project=project, tagger_kind=kind, strategy=strategy)
    if kind is not None:
        if form.kind != kind:
            return HttpResponseBadRequest(f"unknown tagger {kind!r}")
        fields = form.tagger_fields
    elif strategy is not None:
        if form.chosen_strategy != strategy:
            return HttpResponseBadRequest(f"unknown query strategy {strategy!r}")
        fields = form.strategy_fields
    else:
        return HttpResponseBadRequest("name a tagger_kind or a strategy")
    return render(request, "learning/_loop_parameters.html", {"fields": fields})


@require_POST
def retrain_now(request, project_id: int):
    project = managed_project(request.user, project_id)
    job, created = request_lead_retrain(project=project, user=request.user)
    if created:
        messages.success(request, gettext("A retrain is queued; this page follows it."))
    else:
        messages.info(request, gettext("A retrain is already %(status)s; another one will follow it, so your latest "
                               "settings and submissions are used.") % {"status": job.get_status_display().lower()})
    return redirect("learning:loop", project_id=project.pk)



@require_POST
def deid_model_train(request, project_id: int):
    """A lead asks for the project's de-identification model (the ensemble); the settings page shows it."""
    project = managed_project(request.user, project_id)
    model, created = request_deid_model(project=project, user=request.user, request=request)
    if created:
        messages.success(request, gettext("The de-identification model is queued; a worker trains it (the "
                                          "BiLSTM-CRF takes minutes) and this page follows it."))
    else:
        messages.info(request, gettext("A de-identification model is already %(status)s.")
                      % {"status": model.get_status_display().lower()})
    return redirect("deid:policy", project_id=project.pk)
