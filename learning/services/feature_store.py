"""Documents' token features shared by every worker process and host, in PostgreSQL beside the documents.

The CRF's feature cache (``learning.core.features.FeatureCache``) is per process. With this store behind it,
a process that has featurized nothing yet (a worker just started, or grown back after its idle time, or on
another host) reads each record's tokens, sentences, forms and line context
(``FeatureExtractor.portable``) rather than computing them again, and a record is tokenized once, by the
first process that needs it. Rows (``StoredFeatures``) belong to their documents and are deleted with them.

A project's CRF reads its documents with an extractor of its own (scoped by the project's id), whose
vocabulary is shared here too (``StoredVocabulary``, deleted with the project): a process that starts on the
project adopts the forms, bigrams and attribute ids some process shared last, so that it scores as fast as one
that has read the documents before.
"""
from __future__ import annotations

import logging
from typing import Sequence

from django.db import IntegrityError, connection, transaction

from annotator.models import Document, Project
from annotator.services.imports import content_hash
from learning.models import StoredFeatures, StoredVocabulary

log = logging.getLogger(__name__)


class DocumentFeatureStore:
    """``learning.core.features.SharedFeatures`` over ``StoredFeatures``, found by the text's content hash."""

    def get_many(self, texts: Sequence[str]) -> list[bytes | None]:
        hashes = [content_hash(text) for text in texts]
        stored = dict(
            StoredFeatures.objects.filter(content_hash__in=set(hashes)).values_list("content_hash", "data")
        )
        return [bytes(stored[h]) if h in stored else None for h in hashes]

    def put_many(self, items: Sequence[tuple[str, bytes]]) -> None:
        """Store the features of every document with one of these texts (a text not in any document, such as
        a sentence of one, is left out), in document order so that two writers never wait on each other."""
        by_hash = {content_hash(text): blob for text, blob in items}
        table = connection.ops.quote_name(StoredFeatures._meta.db_table)
        documents = connection.ops.quote_name(Document._meta.db_table)
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(
                    f"""
                    INSERT INTO {table} (document_id, content_hash, data)
                    SELECT d.id, d.content_hash, v.data
                    FROM unnest(%s::text[], %s::bytea[]) AS v(hash, data)
                    JOIN {documents} AS d ON d.content_hash = v.hash
                    ORDER BY d.id
                    ON CONFLICT (document_id) DO UPDATE SET data = EXCLUDED.data
                    """,
                    [list(by_hash), list(by_hash.values())],
                )
        except IntegrityError as error:  # a document deleted meanwhile: its features are not needed
            log.info("features of %s documents not stored: %s", len(by_hash), error)

    def get_vocabulary(self, key: str, scope: str) -> bytes | None:
        data = (StoredVocabulary.objects.filter(project_id=int(scope), extractor_key=key)
                .values_list("data", flat=True).first())
        return None if data is None else bytes(data)

    def put_vocabulary(self, key: str, scope: str, n_forms: int, snapshot: bytes) -> None:
        """Keep ``snapshot`` as the project's vocabulary for ``key`` unless the one kept knows as many forms;
        the project's vocabularies of other keys (older features, other gazetteers) go."""
        table = connection.ops.quote_name(StoredVocabulary._meta.db_table)
        projects = connection.ops.quote_name(Project._meta.db_table)
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(
                    f"""
                    INSERT INTO {table} AS kept (project_id, extractor_key, forms, data, updated_at)
                    SELECT id, %s, %s, %s, now() FROM {projects} WHERE id = %s
                    ON CONFLICT (project_id, extractor_key) DO UPDATE
                    SET forms = EXCLUDED.forms, data = EXCLUDED.data, updated_at = EXCLUDED.updated_at
                    WHERE kept.forms < EXCLUDED.forms
                    """,
                    [key, n_forms, snapshot, int(scope)],
                )
                StoredVocabulary.objects.filter(project_id=int(scope)).exclude(extractor_key=key).delete()
        except IntegrityError as error:  # the project deleted meanwhile (a deleted one gets no row)
            log.info("vocabulary of project %s not stored: %s", scope, error)


def share_features() -> None:
    """Put this store behind the process-wide feature cache (called as each worker pool process starts)."""
    from learning.core.features import DEFAULT_CACHE  # here: web processes import this module without scipy

    DEFAULT_CACHE.shared = DocumentFeatureStore()
