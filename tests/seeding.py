"""A project with a history, for the dashboard's tests: gold submitted by two annotators through the real
services (timed, with corrections against the model's suggestions), a model version after every batch, and
a finished simulation. Deterministic for a given seed."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.contrib.auth import get_user_model

from annotator.corrections import count_corrections
from annotator.models import Membership, Project
from annotator.services.annotations import submit
from annotator.services.imports import import_documents
from annotator.services.projects import create_project, set_membership
from annotator.services.queue import next_record
from corpus.synthetic import generate_notes
from learning.models import RetrainJob, SimulationRun
from learning.services import jobs
from learning.services.retrain import run_here
from learning.services.simulations import request_simulation, run_simulation

#: Seconds an annotator of the seeded project spends: per token, per missed PHI added, per wrong suggestion.
SECONDS_PER_TOKEN, SECONDS_PER_FN, SECONDS_PER_FP = 0.15, 9.0, 4.0


@dataclass
class SeededProject:
    project: Project
    lead: object
    annotators: list
    simulation: SimulationRun | None


def seed_dashboard_project(
    *, name: str = "Dashboard", password: str, batches: int = 3, batch_size: int = 6, seed: int = 5,
    simulate: bool = True,
) -> SeededProject:
    """8 imported gold notes, 10 evaluation notes, a pool of 40; then ``batches`` batches annotated by two
    annotators, each followed by a retrain (so ``batches + 1`` model versions), and a small simulation
    (Random vs LCUB_6, batch 5, 2 runs) when ``simulate``."""
    users = get_user_model().objects
    lead = users.create_user(f"{name.lower()}-lead", password=password)
    annotators = [users.create_user(f"{name.lower()}-{who}", password=password) for who in ("ana", "bea")]
    project = create_project(name=name, schema="MEDDOCAN", created_by=lead)
    set_membership(project=project, user=lead, role=Membership.Role.LEAD)
    for user in annotators:
        set_membership(project=project, user=user, role=Membership.Role.ANNOTATOR)
    notes = generate_notes(58, seed=seed)
    import_documents(project=project, documents=notes[:8], annotated=True)
    import_documents(project=project, documents=notes[8:18], annotated=True, evaluation=True)
    import_documents(project=project, documents=notes[18:], annotated=False)
    project.batch_size = batch_size
    project.save()
    gold = {note.name: note for note in notes[18:]}
    rng = np.random.default_rng(seed)

    _retrain(project)
    for batch in range(batches):
        for i in range(batch_size):
            user = annotators[i % 2]
            handout = next_record(project=project, user=user)
            note = gold[handout.assignment.document.external_id]
            final = [{"start": s.start, "end": s.end, "label": s.label} for s in note.spans]
            corrections = count_corrections(handout.annotation.suggested, final)
            seconds = (SECONDS_PER_TOKEN * len(note.text.split()) * 1.3 + SECONDS_PER_FN * corrections.fn_fixes
                       + SECONDS_PER_FP * corrections.fp_fixes) * float(rng.uniform(0.9, 1.1)) + 5
            submit(annotation_id=handout.annotation.pk, user=user, version=handout.annotation.version,
                   spans=final, active_seconds=seconds)
        _retrain(project)

    simulation = None
    if simulate:
        simulation = request_simulation(project=project, user=lead, strategies=["random", "LCUB_6"],
                                        batch_sizes=[5], initial=5, iterations=3, runs=2, seed=seed)
        simulation = run_simulation(simulation.pk)
    return SeededProject(project=project, lead=lead, annotators=annotators, simulation=simulation)


def _retrain(project: Project) -> None:
    """Run the retrain a full batch queued (when submissions committed), or a new one, here and now."""
    job = RetrainJob.objects.filter(project=project, status__in=RetrainJob.ACTIVE).first()
    if job is None:
        job, _ = jobs.request_retrain(project=project, reason=RetrainJob.Reason.COMMAND, force=True)
    run_here(job)
