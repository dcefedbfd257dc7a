"""Benchmark helper (bench/workbench_latency.py): a project whose pool is a brat corpus, a current ranking
with pre-annotations for every record, and N annotator accounts. Not for real projects: the
"suggestions" are the corpus's gold spans with random confidences, standing in for a model's output. With
``--completed-ahead N`` the first N records' suggestions are completed and marked as the worker completes a new
ranking's first records after publishing it (``annotator.signals.complete_suggestions``), so that handing them out
takes them as they are."""
import json
from pathlib import Path

import numpy as np
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from annotator.models import Membership, Project
from annotator.services.imports import content_hash, import_path
from annotator.services.projects import create_project
from annotator.services.ranking import activate_ranking, add_scores, stage_ranking
from annotator.signals import complete_suggestions
from corpus.formats import read_corpus
from corpus.span_json import write_span


class Command(BaseCommand):
    help = "Benchmark helper: seed a project with an unannotated pool, a ranking with suggestions, and annotators."

    def add_arguments(self, parser):
        parser.add_argument("corpus", type=Path, help="a brat folder")
        parser.add_argument("--project", default="Benchmark")
        parser.add_argument("--annotators", type=int, default=20)
        parser.add_argument("--username-prefix", default="bench")
        parser.add_argument("--password", required=True)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--completed-ahead", type=int, default=0,
                            help="how many of the ranking's first records have their suggestions completed ahead")

    @transaction.atomic
    def handle(self, *args, corpus: Path, project: str, annotators: int, username_prefix: str, password: str,
               seed: int, completed_ahead: int, **options):
        if Project.objects.filter(name=project).exists():
            raise CommandError(f"a project named {project!r} exists already; seed a fresh database")
        target = create_project(name=project, schema="MEDDOCAN", language="es")
        report = import_path(project=target, path=corpus, fmt="brat", annotated=False)

        rng = np.random.default_rng(seed)
        gold = {content_hash(document.text): document for document in read_corpus(corpus, "brat")}
        documents = list(target.documents.only("id", "content_hash", "text").order_by("id"))
        scores = rng.random(len(documents))
        order = np.argsort(-scores, kind="stable")
        entries = []
        for index in order:
            spans = gold[documents[index].content_hash].spans
            confidences = rng.uniform(0.5, 1.0, len(spans))
            pre = {"spans": [write_span(span, confidence=round(float(p), 3)) for span, p in zip(spans, confidences)],
                   "possible_missed": []}
            if len(entries) < completed_ahead:
                pre = complete_suggestions(project=target, text=documents[index].text, stored=pre)
            entries.append((documents[index].pk, float(scores[index]), pre))
        ranking = stage_ranking(project=target, strategy="LCUB_6", strategy_params={})
        add_scores(ranking_id=ranking.pk, entries=entries)
        activate_ranking(ranking_id=ranking.pk, model_version_id=None, order=[entry[0] for entry in entries])

        # One hash for every account: hashing a password is slow on purpose, and they all share it.
        User = get_user_model()
        hashed = make_password(password)
        people = User.objects.bulk_create([
            User(username=f"{username_prefix}{i}", password=hashed) for i in range(annotators)
        ])
        Membership.objects.bulk_create([
            Membership(project=target, user=person, role=Membership.Role.ANNOTATOR) for person in people
        ])
        self.stdout.write(json.dumps({
            "project_id": target.pk, "documents": report.created, "scored": len(entries),
            "suggested_spans": sum(len(pre["spans"]) for _, _, pre in entries),
            "annotators": [person.username for person in people],
        }))
