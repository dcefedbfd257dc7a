"""The de-identification settings page, for the project's leads and admins: the model that finds the PHI (and
the state of the project's de-identification model), a strategy per PHI label and the surrogates' settings;
every change is audited."""
from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_http_methods

from annotator.permissions import managed_project
from annotator.services.projects import update_deid_settings
from deid.forms.policy import PolicyForm
from deid.services.policy import DeidError, clean_policy
from learning.selectors.models import deid_model_state


@require_http_methods(["GET", "POST"])
def policy_settings(request, project_id: int):
    project = managed_project(request.user, project_id)
    if request.htmx and request.method == "GET":  # the de-identification model's state, while one trains
        return render(request, "deid/_deid_model.html", {"project": project, **deid_model_state(project)})
    form = PolicyForm(project, request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            changes = {
                "conceal_policy": clean_policy(project, form.strategies()),
                "surrogate_scope": form.cleaned_data["surrogate_scope"],
                "age_bucket": form.cleaned_data["age_bucket"],
                "review_confidence": form.cleaned_data["review_confidence"],
                "deid_tagger": form.deid_tagger(),
            }
        except DeidError as error:
            form.add_error(None, str(error))
        else:
            changed = update_deid_settings(project=project, user=request.user, changes=changes)
            messages.success(request, gettext("Saved (%(settings)s).") % {"settings": ", ".join(sorted(changed))} if changed
                             else gettext("Nothing changed."))
            return redirect("deid:policy", project_id=project.pk)
    status = 400 if request.method == "POST" else 200
    return render(request, "deid/policy.html", {"project": project, "form": form, **deid_model_state(project)},
                  status=status)
