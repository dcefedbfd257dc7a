"""A record's suggestions completed from its own text, for a project: every mention of a string the model
tagged, and structured PHI a sure pattern finds (``learning.core.pre_annotation.complete_suggestions``).

Completing costs a few milliseconds a record: too much for every pool record at every retrain, and the
heaviest step of handing a record out. So the worker completes the first records of each new ranking right
after publishing it (:func:`complete_first_records`), the ones annotators are handed before the next
ranking, and marks them with what they were completed for (:func:`completion_mark`). At hand-out
(``learning.receivers`` answers the annotator app's ``suggestion_completion`` signal with :func:`completer`)
a record so marked is taken as it is; any other is completed then. A mark of other labels or another language
(the project changed since) is not taken.
"""
from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable

from annotator.models import Project
from annotator.selectors import first_ranked
from annotator.services.ranking import replace_pre_annotations
from corpus.text import tokens_of
from learning.core.pre_annotation import COMPLETION_VERSION, complete_suggestions

log = logging.getLogger(__name__)

#: How many of a new ranking's first records the worker completes ahead of their hand-out.
COMPLETED_AHEAD = 100


def completion_mark(project: Project) -> str:
    """What a record's completed suggestions are marked with: the completion's version, the project's labels and
    its language."""
    what = "\n".join([str(COMPLETION_VERSION), project.language or "", *(project.labels or ())])
    return hashlib.sha256(what.encode()).hexdigest()[:16]


def completer(project: Project) -> Callable[[str, dict], dict]:
    """``complete(text, stored) -> stored`` for ``project``'s records: the stored suggestions completed, or as
    they are when they carry this project's mark."""
    labels, language, mark = tuple(project.labels or ()), project.language, completion_mark(project)

    def complete(text: str, stored: dict) -> dict:
        if stored.get("completed") == mark:
            return stored
        completed = complete_suggestions(text, tokens_of(text), stored, schema_labels=labels, language=language)
        return {**completed, "completed": mark}

    return complete


def complete_first_records(*, project_id: int, ranking_id: int, count: int = COMPLETED_AHEAD) -> int:
    """Complete and mark the suggestions of the first ``count`` records of a ranking that are not marked yet;
    returns how many were written. A failure only leaves them to be completed at hand-out."""
    try:
        project = Project.objects.get(pk=project_id)
        complete, mark = completer(project), completion_mark(project)
        done = {document_id: complete(text, stored)
                for document_id, text, stored in first_ranked(ranking_id=ranking_id, count=count)
                if stored.get("completed") != mark}
        return replace_pre_annotations(ranking_id=ranking_id, pre_annotations=done)
    except Exception:  # noqa: BLE001 - the ranking is published; hand-outs complete what is not marked
        log.exception("could not complete the first records of ranking %s ahead of their hand-out", ranking_id)
        return 0
