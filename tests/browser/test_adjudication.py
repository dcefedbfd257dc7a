"""Adjudication in a real browser, by keyboard (text is selected as with the mouse): two records whose annotators
disagree are decided one after the other — versions taken, a conflict rejected, a span nobody marked added, an
agreed span rejected and restored — and the gold stored is what the keys chose."""
from __future__ import annotations

import pytest

from annotator.models import Annotation, Document
from annotator.selectors import gold_documents
from tests.browser.conftest import CHROMIUM, log_in, screenshot, seed_double_annotation, wait_for_true

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is missing: apt-get install chromium"),
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
]
NAME, DATE, PLACE = "NOMBRE_SUJETO_ASISTENCIA", "FECHAS", "TERRITORIO"
FAMILY = "FAMILIARES_SUJETO_ASISTENCIA"
RECORDS = [  # (name, text, ana's spans, olga's spans)
    ("r1", "Ana Ruiz vive en Madrid desde el 17/03/2009.",
     [(0, 8, NAME), (17, 23, PLACE), (33, 43, DATE)], [(0, 3, NAME), (17, 23, PLACE)]),
    ("r2", "Luis Gil vive en Soria con su hija Eva.", [(0, 8, NAME)], [(0, 8, NAME), (17, 22, PLACE)]),
]


def select(page, word: str) -> None:
    """Select ``word`` in the record's text, as a mouse drag would."""
    page.evaluate("""(word) => {
        const walker = document.createTreeWalker(document.getElementById('adjudication-text'), NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const at = node.textContent.indexOf(word);
            if (at >= 0) {
                const range = document.createRange();
                range.setStart(node, at);
                range.setEnd(node, at + word.length);
                window.getSelection().removeAllRanges();
                window.getSelection().addRange(range);
                return;
            }
        }
        throw new Error('no ' + word);
    }""", word)


def test_two_records_adjudicated_by_keyboard_alone(live_server, new_page):
    project = seed_double_annotation(name="Adjudication", prefix="adj", records=RECORDS)
    first, second = Document.objects.filter(project=project).order_by("id")
    page = new_page()
    log_in(page, live_server.url, "adj-lead", f"/projects/{project.pk}/adjudication/")
    assert page.locator("#adjudication-table tbody tr").count() == 2
    page.focus("#start-adjudication")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/adjudication/{first.pk}/")
    assert page.locator("#conflict-list .conflict-card").count() == 2  # the name, and the date only Ana marked
    assert page.locator("#adjudication-text mark.agreed").inner_text() == "Madrid"
    screenshot(page, "adjudication")

    page.keyboard.press("Control+Enter")  # nothing decided yet: refused, nothing saved
    wait_for_true(page, "document.getElementById('adjudication-status').textContent.startsWith('Decide every')")
    page.keyboard.press("2")  # the name: olga's "Ana"
    page.keyboard.press("1")  # then the date: ana's
    page.keyboard.press("k")  # back to the name, and change it to ana's "Ana Ruiz"
    page.keyboard.press("1")
    assert page.locator(".conflict-card.decided").count() == 2
    page.keyboard.press("Control+Enter")
    page.wait_for_url(f"**/adjudication/{second.pk}/")

    assert page.locator("#conflict-list .conflict-card").count() == 1  # Soria, marked by olga only
    page.keyboard.press("x")  # not PHI here, says the adjudicator
    # "Eva", which nobody marked, is selected (as with the mouse) and added with its label by keyboard
    select(page, "Eva")
    page.keyboard.press("a")
    page.keyboard.type("FAMILIARES")
    page.keyboard.press("Enter")
    assert page.locator("#added-list li[data-added]").inner_text().startswith("added «Eva» " + FAMILY)
    assert page.locator("#adjudication-text mark.added").get_attribute("data-label") == FAMILY
    select(page, "Gil")  # part of a span everybody marked: r rejects it, r again restores it
    page.keyboard.press("r")
    assert page.locator("#adjudication-text mark.agreed.rejected").inner_text() == "Luis Gil"
    screenshot(page, "adjudication-changes")
    page.keyboard.press("r")
    assert page.locator("#adjudication-text mark.agreed.rejected").count() == 0
    page.keyboard.press("Control+Enter")
    page.wait_for_url(f"**/projects/{project.pk}/adjudication/")
    assert "Nothing to adjudicate" in page.content()
    assert page.script_errors == []

    gold = {document.name: [(s.start, s.end, s.label) for s in document.spans]
            for document in gold_documents(project=project)}
    assert gold == {"r1": [(0, 8, NAME), (17, 23, PLACE), (33, 43, DATE)], "r2": [(0, 8, NAME), (35, 38, FAMILY)]}
    decided = Annotation.objects.filter(document__project=project, source=Annotation.Source.ADJUDICATED)
    assert {a.adjudicated_by.username for a in decided} == {"adj-lead"} and decided.count() == 2
    assert set(Document.objects.filter(project=project).values_list("status", flat=True)) == {"adjudicated"}
