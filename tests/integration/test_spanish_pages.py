"""Every page of a project in Spanish: chosen with the navigation's picker (the cookie set_language leaves) or
asked for by the browser (Accept-Language); English stays the default when the browser asks for nothing."""
from __future__ import annotations

import pytest
from django.conf import settings
from django.urls import reverse

pytestmark = pytest.mark.django_db

#: (url name, a heading or button of the page in Spanish, the same in English).
PAGES = [
    ("annotator:project-list", "Proyectos", "Projects"),
    ("annotator:project-detail", "Anotar el siguiente registro", "Annotate the next record"),
    ("annotator:annotate-next", "No tiene ningún registro abierto en este proyecto", "You have no record open"),
    ("annotator:project-labels", "Añadir una etiqueta", "Add a label"),
    ("annotator:members", "Crear una cuenta y añadirla", "Create an account and add it"),
    ("annotator:audit", "Registro de auditoría", "Audit log"),
    ("annotator:adjudication-queue", "Nada que adjudicar", "Nothing to adjudicate"),
    ("learning:loop", "Ciclo de aprendizaje activo", "Active-learning loop"),
    ("learning:dashboard", "Panel de aprendizaje", "Learning dashboard"),
    ("learning:people", "Personas y costes", "People and costs"),
    ("learning:agreement", "Aún no hay registros con doble anotación", "No double-annotated records yet"),
    ("learning:clusters", "Grupos estilométricos", "Stylometric clusters"),
    ("deid:policy", "Ajustes de anonimización", "De-identification settings"),
    ("deid:deidentify", "Anonimizar texto", "De-identify text"),
    ("deid:planner", "Planificador de publicación", "Release planner"),
]


def _url(name: str, project) -> str:
    return reverse(name) if name == "annotator:project-list" else reverse(name, args=[project.pk])


@pytest.mark.parametrize("name, spanish, english", PAGES, ids=[page[0] for page in PAGES])
def test_a_lead_who_picked_spanish_reads_the_page_in_spanish(client, users, loop_project, name, spanish, english):
    client.force_login(users["lead"])
    chosen = client.post(reverse("set_language"), {"language": "es", "next": "/"})
    assert chosen.status_code == 302 and client.cookies[settings.LANGUAGE_COOKIE_NAME].value == "es"
    page = client.get(_url(name, loop_project))
    assert page.status_code == 200
    html = page.content.decode()
    assert '<html lang="es">' in html and spanish in html and english not in html


def test_the_browser_language_decides_until_the_user_picks_one(client, users, projects):
    client.force_login(users["lead"])
    url = reverse("annotator:project-detail", args=[projects["A"].pk])
    assert "Anotar el siguiente registro" in client.get(url, HTTP_ACCEPT_LANGUAGE="es-ES,es;q=0.9").content.decode()
    assert "Annotate the next record" in client.get(url).content.decode()  # nothing asked: English
    client.post(reverse("set_language"), {"language": "en", "next": "/"})
    assert "Annotate the next record" in client.get(url, HTTP_ACCEPT_LANGUAGE="es").content.decode()


def test_a_refused_filter_is_explained_in_spanish(client, users, projects):
    client.force_login(users["lead"])
    client.post(reverse("set_language"), {"language": "es", "next": "/"})
    url = reverse("annotator:audit", args=[projects["A"].pk])
    page = client.get(url, {"date_from": "2026-03-02", "date_to": "2026-03-01"}).content.decode()
    assert "La fecha final es anterior a la inicial." in page
    assert "No se listan eventos: corrija los filtros marcados arriba." in page
