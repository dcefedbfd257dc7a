"""A project's Labels page, for its leads and admins: add a label, change a label's colour or key, rename a
label (every stored span follows) and delete one that no stored span uses."""
from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_http_methods

from annotator.label_forms import FORMS, AddLabelForm
from annotator.permissions import managed_project
from annotator.schemas import label_styles, unused_style
from annotator.services.labels import LabelError, add_label, delete_label, rename_label, restyle_label


def _apply(action: str, *, project, user, data: dict) -> str:
    """Make the change; the message saying what was done."""
    if action == "add":
        style = add_label(project=project, user=user, name=data["name"], colour=data["colour"], key=data["key"])
        if style["key"]:
            return gettext("Added %(label)s (key %(key)s).") % {"label": data["name"], "key": style["key"]}
        return gettext("Added %(label)s (no key).") % {"label": data["name"]}
    if action == "restyle":
        changed = restyle_label(project=project, user=user, label=data["label"], colour=data["colour"],
                                key=data["key"])
        return gettext("Saved the colour and key of %(label)s.") % {"label": data["label"]} if changed \
            else gettext("Nothing changed.")
    if action == "rename":
        usage = rename_label(project=project, user=user, old=data["label"], new=data["name"])
        return gettext("Renamed %(old)s to %(new)s in %(spans)s of %(records)s.") % {
            "old": data["label"], "new": data["name"], "spans": usage.spans_text(), "records": usage.records_text()}
    delete_label(project=project, user=user, label=data["label"])
    return gettext("Deleted %(label)s.") % {"label": data["label"]}


@require_http_methods(["GET", "POST"])
def labels_page(request, project_id: int):
    project = managed_project(request.user, project_id)
    failed = None
    if request.method == "POST":
        form_class = FORMS.get(request.POST.get("action", ""))
        if form_class is None:
            return HttpResponseBadRequest("unknown action; send one of: " + ", ".join(FORMS))
        failed = form_class(request.POST, **({} if form_class is AddLabelForm else {"auto_id": False}))
        if failed.is_valid():
            try:
                done = _apply(form_class.action, project=project, user=request.user, data=failed.cleaned_data)
            except LabelError as error:
                field = error.field if error.field in failed.fields and error.field != "label" else None
                failed.add_error(field, str(error))
            else:
                messages.success(request, done)
                return redirect("annotator:project-labels", project_id=project.pk)
    rows = []
    for style in label_styles(project.labels, project.label_styles):
        mine = failed is not None and failed.data.get("label") == style["label"]
        forms = {action: (failed if mine and failed.action == action else
                          form_class(initial={"label": style["label"], "colour": style["colour"],
                                              "key": style["key"], "name": style["label"]}, auto_id=False))
                 for action, form_class in FORMS.items() if action != "add"}
        rows.append({**style, **forms})
    add_form = (failed if isinstance(failed, AddLabelForm)
                else AddLabelForm(initial=unused_style(project.labels, project.label_styles)))
    return render(request, "annotator/labels.html", {
        "project": project, "rows": rows, "add_form": add_form,
        # A refusal about a label the page no longer lists (renamed or deleted meanwhile) is shown on top.
        "orphan_errors": (failed.non_field_errors() if failed is not None and failed.errors
                          and failed.data.get("label") not in project.labels else []),
    }, status=400 if request.method == "POST" else 200)
