"""What the export page offers and refuses: the records with gold by status, and the combinations of format,
concealment, evaluation set and statuses that cannot be exported, each with its reason, by the field it
concerns. The page and the REST export ask here, before anything is written."""
from __future__ import annotations

from collections import Counter
from collections.abc import Collection

from django.utils.translation import gettext

from annotator.models import Document, Project
from annotator.selectors import gold_documents, gold_statuses
from corpus.formats import validate_spans
from deid.services.policy import Concealment, DeidError

FORMAT_NAMES = {"jsonl": "JSONL", "brat": "brat standoff", "conll": "CoNLL BIO", "i2b2xml": "i2b2 XML"}
STATUS_NAMES = dict(Document.Status.choices)


def gold_by_status(*, project: Project) -> list[dict]:
    """``[{"status", "count", "evaluation"}]``: the records with gold in each status (of them, how many in the
    evaluation set), in the statuses' order, statuses without any left out."""
    counts = Counter(gold_statuses(project=project))
    return [
        {"status": status, "count": counts[status, Document.Role.POOL] + counts[status, Document.Role.EVALUATION],
         "evaluation": counts[status, Document.Role.EVALUATION]}
        for status in Document.Status.values
        if counts[status, Document.Role.POOL] + counts[status, Document.Role.EVALUATION]
    ]


def export_refusals(
    *, project: Project, fmt: str, conceal: str, include_evaluation: bool, statuses: Collection[str] | None,
) -> dict[str, str]:
    """Why this export cannot be made, by field (``statuses``, ``conceal``, ``format``); empty when it can.
    ``statuses=None`` (the REST export without a choice): every record with gold, even none."""
    refusals: dict[str, str] = {}
    if statuses is None:
        pass
    elif not statuses:
        refusals["statuses"] = gettext("Choose at least one status.")
    else:
        chosen = [row for row in gold_by_status(project=project) if row["status"] in statuses]
        exported = sum(row["count"] - (0 if include_evaluation else row["evaluation"]) for row in chosen)
        if not exported:
            names = gettext(" or ").join(
                str(STATUS_NAMES[status]) for status in Document.Status.values if status in statuses).lower()
            refusals["statuses"] = (
                gettext("No record with gold is %(statuses)s: there is nothing to export.") if include_evaluation
                else gettext("No record with gold is %(statuses)s outside the evaluation set: there is nothing to "
                             "export.")) % {"statuses": names}
    if conceal != "none":
        try:
            Concealment(project, conceal)
        except DeidError as error:
            refusals["conceal"] = gettext("This project cannot be de-identified this way: %(error)s.") % {"error": error}
    if fmt == "conll" and project.allow_overlap and "statuses" not in refusals:
        documents = gold_documents(project=project, include_evaluation=include_evaluation, statuses=statuses)
        overlaps = sum(problem.kind == "overlap" for problem in validate_spans(documents, allow_overlap=False))
        if overlaps:
            refusals["format"] = gettext(
                "CoNLL BIO gives each token one tag, so it cannot hold the %(overlaps)s overlapping span(s) of this "
                "gold standard; choose JSONL, brat standoff or i2b2 XML."
            ) % {"overlaps": overlaps}
    return refusals
