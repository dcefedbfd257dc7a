"""De-identifying new text with the project's current model: find the PHI, conceal it per a policy.

One run (:class:`Deidentifier`) loads the current model once, then for each text: the tagger's marginals →
spans with a confidence each (``learning.core.pre_annotation``: a span is as sure as its least sure token) →
``deid.core.conceal``. Spans the model is less sure of than the project's ``review_confidence`` are listed
in the report as "to review" (at their offsets in the de-identified text; the report holds no original value).

Recall bias (ALGORITHMS.md §3): by default the thresholds the model was published with (tuned for the
project's β on its evaluation documents) are used, if any. Asking for another β tunes (τ_main, τ_alt) for it
on the project's evaluation documents (the model was not trained on them), with the model's own marginals.

Inputs (:func:`deidentify_path`, for the command and the worker): a ``.txt`` file, a folder of ``.txt`` files
(a brat folder: its ``.ann`` files are ignored, and the output gets ``.ann`` files with the de-identified
spans), or a ``.jsonl`` file (a ``text`` per line). The output has the input's form, and a ``report.json``
beside it. Documents are read, de-identified and written one at a time: memory stays flat in the input's size.
Every run is audited (``DEIDENTIFY``: who, the policy, how many documents).
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from annotator.models import AuditEvent, Document as DocumentRow, Project
from annotator.selectors import gold_documents
from annotator.services.audit import record_event
from corpus.formats import write_corpus
from corpus.span_json import read_span
from corpus.text import tokenize
from corpus.types import Document, Span
from deid.core.conceal import ConcealError, ConcealReport, conceal
from deid.services.exports import report_path_for, write_report
from deid.services.policy import Concealment, DeidError
from learning.core.artifacts import ArtifactRejected
from learning.core.pre_annotation import complete_suggestions, pre_annotations
from learning.core.recall_bias import BETAS, stored_thresholds, tune_recall_bias
from learning.core.taggers.base import gold_tags
from learning.selectors.models import current_deid_tagger, current_tagger, recall_bias_of

#: The input forms :func:`deidentify_path` reads (and writes back).
INPUT_FORMS = ("txt", "folder", "brat", "jsonl")
#: The report lists at most this many spans to review (and counts them all).
MAX_LISTED_FOR_REVIEW = 10_000
_JSONL_SUFFIXES = (".jsonl", ".ndjson")


class NoModelError(DeidError):
    """The project has no trained model to find PHI with yet."""


@dataclass(frozen=True)
class FoundSpan:
    """A concealed PHI: where it was (``source_*``, in the input), where its replacement stands (``start``,
    ``end``, in the output), how it was concealed and how sure the model was."""

    start: int
    end: int
    label: str
    strategy: str
    confidence: float | None
    source_start: int
    source_end: int

    def as_dict(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "label": self.label, "strategy": self.strategy,
                "confidence": self.confidence}


@dataclass
class Deidentified:
    name: str
    text: str
    spans: list[FoundSpan]
    report: ConcealReport
    to_review: list[dict] = field(default_factory=list)


class Deidentifier:
    """The project's current model and concealment settings, for one run over one or many texts."""

    def __init__(self, project: Project, *, policy: str = "project", recall_bias: float | None = None):
        self.model_kind = (project.deid_tagger or {}).get("kind", "loop")
        try:
            found = current_deid_tagger(project) if self.model_kind == "ensemble" else current_tagger(project)
        except ArtifactRejected as error:
            raise NoModelError(f"the model's file was refused ({error}); train the model again") from None
        if found is None and self.model_kind == "ensemble":
            raise NoModelError(
                f"project {project.name!r} de-identifies with its ensemble model, and none has finished training: "
                "train it on the De-identification settings page, or choose the loop's model there"
            )
        if found is None:
            raise NoModelError(
                f"project {project.name!r} has no trained model yet: annotate some records and retrain first"
            )
        self.project = project
        self.version, self.tagger = found
        self.labels = list(self.tagger.labels_)
        self.policy_name = policy
        self.concealment = Concealment(project, policy)
        self.recall_bias = self._recall_bias(recall_bias)
        self.review_confidence = float(project.review_confidence)
        self.documents = 0
        self.report = ConcealReport()
        self.to_review: list[dict] = []
        self.to_review_total = 0

    def _recall_bias(self, beta: float | None) -> dict | None:
        published = recall_bias_of(self.version)
        # A β asked for is one β for every type: the model's own thresholds serve when they are one pair for it.
        if beta is None or (published and published.get("beta") == beta and "thresholds" not in published):
            return published
        if beta <= 0:
            raise DeidError(f"the recall bias β must be positive (e.g. one of {', '.join(map(str, BETAS))})")
        tuning = gold_documents(project=self.project, role=DocumentRow.Role.EVALUATION)
        if not tuning:
            raise DeidError(
                "a recall bias other than the model's own needs evaluation documents to tune its thresholds on; "
                "import some with gold annotations as the evaluation set"
            )
        chosen = tune_recall_bias(self.tagger.predict_marginals(tuning), [gold_tags(d) for d in tuning],
                                  self.labels, beta)
        return {"beta": beta, "tau_main": chosen.tau_main, "tau_alt": chosen.tau_alt,
                "tuned_on": f"{len(tuning)} evaluation documents"}

    def _model_spans(self, text: str) -> list[tuple[Span, float]]:
        if not text.strip():
            return []
        tokens = tokenize(text)
        if not tokens:
            return []
        (marginals,) = self.tagger.predict_marginals([Document(text=text)])
        found = pre_annotations(tokens, marginals, self.labels, recall_bias=stored_thresholds(self.recall_bias))
        # What annotators are shown, concealed: every mention of a tagged string, structured PHI by pattern.
        found = complete_suggestions(text, tokens, found, schema_labels=tuple(self.project.labels or ()),
                                     language=self.project.language)
        return [(read_span(item), float(item["confidence"])) for item in found["spans"]]

    def run(self, text: str, *, name: str, meta: dict | None = None) -> Deidentified:
        """De-identify one text (``name`` keys its surrogates: the same name, the same surrogates)."""
        model_spans = self._model_spans(text)
        try:
            result = conceal(text, [span for span, _ in model_spans], self.concealment.policy,
                             self.concealment.for_document(name, meta), eponym_guard=self.concealment.guard)
        except ConcealError as error:
            raise DeidError(f"{name}: {error}") from None
        found: list[FoundSpan] = []
        for span, origin in zip(result.spans, result.origins):
            inside = [c for s, c in model_spans if origin.start <= s.start and s.end <= origin.end]
            confidence = round(min(inside), 4) if inside else None
            found.append(FoundSpan(span.start, span.end, span.label, self.concealment.policy.strategy_for(span.label),
                                   confidence, origin.start, origin.end))
        review = [{"document": name, **f.as_dict()} for f in found
                  if f.confidence is not None and f.confidence < self.review_confidence]
        self.documents += 1
        self.report = self.report + result.report
        self.to_review_total += len(review)
        room = MAX_LISTED_FOR_REVIEW - len(self.to_review)
        self.to_review += review[:max(room, 0)]
        return Deidentified(name, result.text, found, result.report, review)

    def _model(self) -> dict:
        """Which model de-identified: the loop's model version, or the de-identification model."""
        return {"deid_model": self.version.pk} if self.model_kind == "ensemble" else {"model_version": self.version.pk}

    def summary(self, **extra: Any) -> dict:
        """The run's report: counts per label and strategy, eponyms kept, fallbacks, spans to review."""
        return {
            "project": self.project.name, "policy": self.policy_name, "strategies": self.concealment.strategies(),
            **self._model(), "recall_bias": self.recall_bias, "documents": self.documents,
            **self.report.as_dict(),
            "review_confidence": self.review_confidence, "to_review_total": self.to_review_total,
            "to_review": self.to_review, **extra,
        }

    def audit(self, *, user, source: str, request=None) -> None:
        record_event(
            user=user, action=AuditEvent.Action.DEIDENTIFY, project=self.project, request=request,
            detail={"documents": self.documents, "policy": self.policy_name, "source": source,
                    **self._model(),
                    "recall_bias": self.recall_bias.get("beta") if self.recall_bias else None},
        )


def deidentify_text(
    *, project: Project, text: str, policy: str = "project", recall_bias: float | None = None, user=None,
    source: str = "text", request=None,
) -> tuple[Deidentified, dict]:
    """One text de-identified (the API and the page); audited. Returns the result and the report."""
    run = Deidentifier(project, policy=policy, recall_bias=recall_bias)
    result = run.run(text, name="text")
    run.audit(user=user, source=source, request=request)
    return result, run.summary()


# --- files, one document at a time ---------------------------------------------------------------------------

@dataclass(frozen=True)
class InputDocument:
    name: str
    text: str
    size: int  # bytes read for it (progress)
    extra: dict = field(default_factory=dict)  # what a JSONL line carried besides its text (id, name)


def input_form(source: Path) -> str:
    """``txt``, ``jsonl``, ``brat`` (a folder with ``.ann`` files) or ``folder`` (of ``.txt`` files)."""
    source = Path(source)
    if source.is_dir():
        return "brat" if any(p.suffix.lower() == ".ann" for p in source.iterdir()) else "folder"
    if not source.is_file():
        raise DeidError(f"{source} does not exist")
    suffix = source.suffix.lower()
    if suffix == ".txt":
        return "txt"
    if suffix in _JSONL_SUFFIXES:
        return "jsonl"
    raise DeidError(f"{source.name}: de-identify a .txt file, a folder of .txt files (or brat) or a .jsonl file")


def _text_files(folder: Path) -> list[Path]:
    files = []
    for path in sorted(folder.iterdir(), key=lambda p: p.name):
        if path.name.startswith(".") or path.suffix.lower() != ".txt":
            continue
        if path.is_symlink():
            raise DeidError(f"{folder.name}/{path.name} is a symbolic link; links are not followed")
        if path.is_file():
            files.append(path)
    if not files:
        raise DeidError(f"{folder.name} holds no .txt files to de-identify")
    return files


def _decode(data: bytes, shown: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DeidError(f"{shown}: is not UTF-8 text (byte {error.start})") from None
    if "\x00" in text:
        raise DeidError(f"{shown}: holds NUL bytes (a binary file?)")
    return text.removeprefix("\ufeff")


def input_size(source: Path) -> int:
    """The bytes :func:`read_inputs` will read (for progress)."""
    source = Path(source)
    if source.is_dir():
        return sum(path.stat().st_size for path in _text_files(source))
    return source.stat().st_size


def read_inputs(source: Path, form: str) -> Iterator[InputDocument]:
    """The documents of ``source``, one at a time."""
    source = Path(source)
    if form == "txt":
        data = source.read_bytes()
        yield InputDocument(source.stem, _decode(data, source.name), len(data))
    elif form in ("folder", "brat"):
        for path in _text_files(source):
            data = path.read_bytes()
            yield InputDocument(path.stem, _decode(data, f"{source.name}/{path.name}"), len(data))
    else:
        with source.open("rb") as handle:
            for lineno, raw in enumerate(handle, start=1):
                line = _decode(raw, f"{source.name}, line {lineno}")
                if not line.strip():
                    continue
                try:
                    item = json.loads(line)
                except json.JSONDecodeError as error:
                    raise DeidError(f"{source.name}, line {lineno}: not JSON ({error.msg})") from None
                if isinstance(item, str):
                    item = {"text": item}
                if not isinstance(item, dict) or not isinstance(item.get("text"), str):
                    raise DeidError(f'{source.name}, line {lineno}: expected {{"text": "..."}} or a JSON string')
                extra = {key: item[key] for key in ("id", "name") if key in item}
                name = str(item.get("name") or item.get("id") or f"{source.stem}:{lineno}")
                yield InputDocument(name, item["text"], len(raw), extra)


def _private(path: Path) -> None:
    os.chmod(path, 0o600)


class _Writer:
    """Writes each de-identified document as soon as it is done, in the input's form."""

    def __init__(self, out: Path, form: str):
        self.out, self.form = Path(out), form
        self._handle = None
        if form in ("folder", "brat"):
            self.out.mkdir(mode=0o700, parents=True, exist_ok=True)
        else:
            self.out.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            descriptor = os.open(self.out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            self._handle = os.fdopen(descriptor, "wb")

    def write(self, document: InputDocument, result: Deidentified) -> None:
        if self.form == "txt":
            self._handle.write(result.text.encode("utf-8"))
        elif self.form == "jsonl":
            record = {**document.extra, "text": result.text, "spans": [f.as_dict() for f in result.spans]}
            self._handle.write((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
        else:
            spans = tuple(Span(f.start, f.end, f.label) for f in result.spans)
            summary = write_corpus([Document(result.text, spans, name=document.name)], self.out,
                                   "brat" if self.form == "brat" else "txt")
            for path in summary.files:
                _private(path)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()


def deidentify_path(
    *, project: Project, source: Path, out: Path, policy: str = "project", recall_bias: float | None = None,
    user=None, progress: Callable[[int, int, int], None] | None = None,
) -> dict:
    """De-identify ``source`` into ``out`` (same form) with the report beside it; audited. ``progress(bytes
    done, bytes in all, documents done)`` is called after each document. Returns the report."""
    source, out = Path(source), Path(out)
    form = input_form(source)
    if out.resolve() == source.resolve():
        raise DeidError("the output must not be the input")
    total = input_size(source)
    run = Deidentifier(project, policy=policy, recall_bias=recall_bias)
    writer = _Writer(out, form)
    done = 0
    try:
        for document in read_inputs(source, form):
            writer.write(document, run.run(document.text, name=document.name))
            done += document.size
            if progress is not None:
                progress(done, total, run.documents)
    finally:
        writer.close()
        run.audit(user=user, source=f"{form}:{source.name}")
    report = run.summary(input=form)
    write_report(report_path_for(out), report)
    return report
