"""First paint of the adjudication page for a long record: about 40,000 characters of MEDDOCAN train notes in
one record, annotated by two people — the gold spans, and the gold with seeded disagreements (5 % missed,
5 % with a boundary moved by a token, 3 % relabelled) — opened in Debian's chromium (headless, Playwright).

Measured per load: the server's answer (the adjudication payload: submissions, agreed spans, conflicts,
segments) and the first contentful paint; each figure is the median of ``--rounds`` loads after one warm-up.
The reference, measured in the same run and the same way, is the project page (which lists records but
renders no text): ``paint_ratio`` = adjudication page / project page. Goal: first paint under 1 s.

Prints one JSON line. Needs the embedded PostgreSQL (started if need be) and /usr/bin/chromium.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics

import numpy as np
import agreement as agreement_bench  # bench/agreement.py, beside this file
from django_env import ROOT, setup_scratch_database

CHROMIUM = "/usr/bin/chromium"
PASSWORD = "bench-adjudication-pw"
TARGET_CHARS = 40_000


def long_record():
    """MEDDOCAN train notes joined until the text reaches :data:`TARGET_CHARS`, with their gold spans."""
    from corpus.types import Span
    from tests.unit.core.meddocan import read_split

    text, spans = "", []
    for doc in read_split("train"):
        if len(text) >= TARGET_CHARS:
            break
        offset = len(text)
        text += doc.text + "\n\n"
        spans += [Span(s.start + offset, s.end + offset, s.label) for s in doc.spans]
    return text, spans


def disagree(text, spans, labels, rng):
    """The agreement benchmark's second annotator, without added spans, and without the overlaps a moved
    boundary can make (the project allows none)."""
    kept = []
    for span in agreement_bench.disagree(text, spans, labels, rng, extra=0.0):
        if not kept or span.start >= kept[-1].end:
            kept.append(span)
    return kept


def seed():
    from django.contrib.auth import get_user_model

    from annotator.models import Membership
    from annotator.schemas import MEDDOCAN
    from annotator.services.annotations import submit
    from annotator.services.imports import import_documents
    from annotator.services.projects import create_project, set_membership
    from annotator.services.queue import next_record
    from corpus.types import Document

    User = get_user_model()
    lead = User.objects.create_user("bench-lead", password=PASSWORD)
    ana = User.objects.create_user("bench-ana", password=PASSWORD)
    olga = User.objects.create_user("bench-olga", password=PASSWORD)
    project = create_project(name="Adjudication bench", schema="MEDDOCAN", created_by=lead)
    project.annotators_per_document = 2
    project.batch_size = 1000
    project.save()
    for person in (ana, olga):
        set_membership(project=project, user=person, role=Membership.Role.ANNOTATOR)
    text, gold = long_record()
    second = disagree(text, gold, list(MEDDOCAN), np.random.default_rng(3))
    import_documents(project=project, annotated=False, documents=[Document(text=text, name="long")])
    for person, spans in ((ana, gold), (olga, second)):
        handout = next_record(project=project, user=person)
        submit(annotation_id=handout.annotation.pk, user=person, version=handout.annotation.version,
               spans=[{"start": s.start, "end": s.end, "label": s.label} for s in spans])
    document = project.documents.get()
    return project, document, len(text), len(gold), len(second)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    if not os.path.exists(CHROMIUM):
        print(json.dumps({"benchmark": "adjudication_page", "skipped": f"{CHROMIUM} is missing"}))
        return
    os.chdir(ROOT)
    setup_scratch_database("deidloop_bench_adjudication")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # Playwright's loop runs in this thread; the ORM is sync
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.test.testcases import LiveServerThread
    from playwright.sync_api import sync_playwright

    from annotator.selectors import adjudication_payload

    project, document, chars, gold_spans, second_spans = seed()
    payload = adjudication_payload(document=document, user=project.created_by)
    server = LiveServerThread("127.0.0.1", StaticFilesHandler, port=0)
    server.daemon = True
    server.start()
    server.is_ready.wait()
    if server.error:
        raise server.error
    base = f"http://127.0.0.1:{server.port}"
    pages = {"adjudication": f"/projects/{project.pk}/adjudication/{document.pk}/",
             "reference": f"/projects/{project.pk}/"}
    figures: dict[str, dict[str, list[float]]] = {name: {"response_ms": [], "paint_ms": []} for name in pages}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                                 args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
            page.goto(base + "/login/")
            page.fill("input[name=username]", "bench-lead")
            page.fill("input[name=password]", PASSWORD)
            page.click("form button[type=submit]")
            page.wait_for_load_state()
            for round_ in range(args.rounds + 1):
                for name, path in pages.items():
                    page.goto(base + path, wait_until="load")
                    for _ in range(100):  # the paint entry is recorded once the frame is presented, after "load"
                        timing = page.evaluate("""() => {
                            const nav = performance.getEntriesByType('navigation')[0];
                            const paint = performance.getEntriesByName('first-contentful-paint')[0];
                            return {response: nav.responseEnd - nav.requestStart,
                                    paint: paint ? paint.startTime : null};
                        }""")
                        if timing["paint"] is not None:
                            break
                        page.wait_for_timeout(50)
                    if round_ and timing["paint"] is not None:  # the first round warms up
                        figures[name]["response_ms"].append(timing["response"])
                        figures[name]["paint_ms"].append(timing["paint"])
            page.goto(base + pages["adjudication"], wait_until="load")
            conflicts = page.locator("#conflict-list .conflict-card").count()
            browser.close()
    finally:
        server.terminate()
    median = {name: {key: round(statistics.median(values), 1) for key, values in values_of.items()}
              for name, values_of in figures.items()}
    paint = median["adjudication"]["paint_ms"]
    print(json.dumps({
        "benchmark": "adjudication_page", "characters": chars, "spans": {"first": gold_spans, "second": second_spans},
        "agreed": len(payload["agreed"]), "conflicts": len(payload["conflicts"]), "conflicts_shown": conflicts,
        "rounds": args.rounds, "adjudication": median["adjudication"], "reference": median["reference"],
        "paint_ratio": round(paint / median["reference"]["paint_ms"], 2), "goal_paint_ms": 1000,
        "goal_met": paint < 1000,
    }))


if __name__ == "__main__":
    main()
