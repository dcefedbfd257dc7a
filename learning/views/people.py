"""The lead's "People and costs" page: records per hour, time and corrections per record, per annotator and
overall, and the measured-cost fit turned into money at an hourly rate the lead enters."""
from __future__ import annotations

from django.shortcuts import render

from annotator.permissions import Can, project_for
from learning.forms.people import HourlyRateForm
from learning.selectors.people import DEFAULT_HOURLY_RATE, annotator_quality, people_summary


def people(request, project_id: int):
    project = project_for(request.user, project_id, Can.SEE_PEOPLE)
    form = HourlyRateForm(request.GET if "rate" in request.GET else {"rate": f"{DEFAULT_HOURLY_RATE:g}"})
    # A rate that does not parse is shown as an error next to the field; the figures use the default meanwhile.
    rate = form.cleaned_data["rate"] if form.is_valid() else DEFAULT_HOURLY_RATE
    summary = people_summary(project=project, hourly_rate=rate)
    chart = {
        "records": summary["records"],
        "hourly_rate": rate,
        "fits": {
            row.name: row.fit.as_dict() if row.fit else None
            for row in [*summary["annotators"], *([summary["overall"]] if summary["overall"] else [])]
        },
        "overall_name": summary["overall"].name if summary["overall"] else None,
        "average": vars(summary["average"]) if summary["average"] else None,
    }
    fit_rows = [*summary["annotators"], summary["overall"]] if summary["overall"] else []
    quality = annotator_quality(project=project)
    chart["quality_weeks"] = quality["weeks"]
    return render(request, "learning/people.html",
                  {"project": project, "form": form, "chart": chart, "fit_rows": fit_rows, "quality": quality,
                   **summary})
