"""A record's suggestions completed from its own text, for a project: every mention of a string the model
tagged, and structured PHI a sure pattern finds (``learning.core.pre_annotation.complete_suggestions``).

Completing costs a few milliseconds a record: too much for every pool record at every retrain, and the
heaviest step of handing a record out. So the worker completes the first records of each new ranking, the ones
annotators are handed before the next ranking, and marks them with what they were completed for
(:func:`completion_mark`): the very first ones inside the transaction that publishes the ranking
(:func:`complete_before_publishing`), so that the records handed out the moment it is served are ready, and
the rest right after (:func:`complete_first_records`), so that publishing waits for few. At hand-out
(``learning.receivers`` answers the annotator app's ``suggestion_completion`` signal with :func:`completer`)
a record so marked is taken as it is; any other is completed then. A mark of other labels or another language
(the project changed since) is not taken.
"""
from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence

from django.db import transaction

from annotator.models import Project
from annotator.selectors import first_ranked, ranked_records
from annotator.services.ranking import replace_pre_annotations
from corpus.text import tokens_of
from learning.core.pre_annotation import COMPLETION_VERSION, complete_suggestions
from learning.selectors.loop import retrain_active

log = logging.getLogger(__name__)

#: How many of a new ranking's first records the worker completes ahead of their hand-out.
COMPLETED_AHEAD = 100
#: How many of them it completes before the ranking is served (10-20 ms each on MEDDOCAN's records, which every
#: retrain waits for): the records annotators may ask for in the second before the rest are completed; a record
#: handed out unmarked is completed then.
COMPLETED_BEFORE_PUBLISHING = 5
#: After publishing, the records are completed this many at a time, and no more once a retrain of the project
#: is waiting: its ranking will replace these, and its training wants the worker's cores.
COMPLETED_CHUNK = 20


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
    """Complete and mark the suggestions of the first ``count`` records of a ranking that are not marked yet,
    :data:`COMPLETED_CHUNK` at a time, stopping early once a retrain of the project is queued or under way;
    returns how many were written. What is left, or lost to a failure, is completed at hand-out."""
    try:
        project = Project.objects.get(pk=project_id)
        records = first_ranked(ranking_id=ranking_id, count=count)
        written = 0
        for start in range(0, len(records), COMPLETED_CHUNK):
            if start and retrain_active(project_id=project_id):
                break
            written += _complete(project, ranking_id, records[start:start + COMPLETED_CHUNK])
        return written
    except Exception:  # noqa: BLE001 - the ranking is published; hand-outs complete what is not marked
        log.exception("could not complete the first records of ranking %s ahead of their hand-out", ranking_id)
        return 0


def complete_before_publishing(*, project: Project, ranking_id: int, order: Sequence[int],
                               count: int = COMPLETED_BEFORE_PUBLISHING) -> int:
    """Complete and mark the suggestions of the first ``count`` records of ``order`` (a staged ranking's document
    ids, first served first), inside the transaction that publishes it; returns how many were written. A
    failure is logged and undone (to a savepoint): the ranking is still published, and hand-outs complete what
    is not marked."""
    try:
        with transaction.atomic():
            return _complete(project, ranking_id, ranked_records(ranking_id=ranking_id, document_ids=order[:count]))
    except Exception:  # noqa: BLE001 - publishing goes on; hand-outs complete what is not marked
        log.exception("could not complete the first records of ranking %s before publishing it", ranking_id)
        return 0


def _complete(project: Project, ranking_id: int, records: list[tuple[int, str, dict]]) -> int:
    complete, mark = completer(project), completion_mark(project)
    done = {document_id: complete(text, stored) for document_id, text, stored in records
            if stored.get("completed") != mark}
    return replace_pre_annotations(ranking_id=ranking_id, pre_annotations=done)
