"""The user guide at /guide/: docs/guide.md rendered with its anchors and screenshots, raw HTML escaped, images
served only as PNG names of docs/img/, and every help link of the templates pointing at a section it has."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from config.guide import GUIDE, IMAGES, render_guide

pytestmark = pytest.mark.django_db

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
#: A help link in a template: ``{% url 'guide' %}#anchor`` or a plain ``/guide/#anchor``.
HELP_LINK = re.compile(r"""(?:\{%\s*url\s+['"]guide['"]\s*%\}|/guide/)#([A-Za-z0-9_-]+)""")


@pytest.fixture
def client_of_annotator():
    client = Client()
    client.force_login(get_user_model().objects.create_user("ana", password="pw"))
    return client


def guide_ids(html: str) -> list[str]:
    return re.findall(r'<h[1-6] id="([^"]+)"', html)


def test_the_guide_page_renders_the_guide_with_its_sections_and_pictures(client_of_annotator):
    response = client_of_annotator.get("/guide/")
    assert response.status_code == 200
    html = response.content.decode()
    ids = guide_ids(html)
    for section in ("annotators", "leads", "admins", "workbench", "loop-settings", "users", "artifact-store"):
        assert section in ids
    assert len(ids) == len(set(ids)), "two sections share an anchor"
    assert '<h3 id="workbench">' in html and "{#workbench}" not in html
    assert '<img src="img/workbench.png"' in html
    assert 'href="/guide/"' in html  # the navigation's Help link


def test_the_guide_needs_a_login():
    response = Client().get("/guide/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert Client().get("/guide/img/workbench.png").status_code == 302


def test_raw_html_in_the_guide_is_escaped():
    html = render_guide('## Title {#intro}\n\n<script>alert(1)</script>\n\n<img src=x onerror="alert(2)">\n\n'
                        'Text with <b>bold</b> and [a link](javascript:alert(3)).\n')
    assert '<h2 id="intro">Title</h2>' in html
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img" not in html and "&lt;img src=x" in html
    assert "<b>" not in html and "&lt;b&gt;bold&lt;/b&gt;" in html
    assert 'href="javascript' not in html


def test_a_heading_without_an_anchor_has_no_id_and_an_anchor_keeps_the_rest_of_the_title():
    html = render_guide("## Plain\n\n### The `loop` page {#loop-page}\n")
    assert "<h2>Plain</h2>" in html
    assert '<h3 id="loop-page">The <code>loop</code> page</h3>' in html


def test_the_image_view_serves_the_guide_pictures_and_nothing_else(client_of_annotator):
    pictures = sorted(IMAGES.glob("*.png"))
    assert pictures, "docs/img/ holds the guide's screenshots (./deidloop screenshots)"
    response = client_of_annotator.get(f"/guide/img/{pictures[0].name}")
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert b"".join(response.streaming_content) == pictures[0].read_bytes()
    for refused in ("../guide.md", "..%2Fguide.md", "../../config/settings.py", "..%2F..%2Fmanage.py",
                    "guide.md", "workbench.svg", "workbench.PNG", "sub/workbench.png", ".png",
                    "%2Fetc%2Fpasswd", "missing-picture.png", "workbench.png%00.txt"):
        assert client_of_annotator.get(f"/guide/img/{refused}").status_code == 404, refused


def test_every_help_link_of_the_templates_opens_a_section_of_the_guide():
    links = {
        (path.relative_to(TEMPLATES).as_posix(), anchor)
        for path in TEMPLATES.rglob("*.html")
        for anchor in HELP_LINK.findall(path.read_text(encoding="utf-8"))
    }
    assert len(links) >= 20, links  # every main page has one
    ids = set(guide_ids(render_guide(GUIDE.read_text(encoding="utf-8"))))
    missing = sorted((template, anchor) for template, anchor in links if anchor not in ids)
    assert missing == [], f"help links to sections the guide lacks: {missing}"


def test_every_picture_the_guide_shows_exists_and_stays_small():
    shown = re.findall(r"!\[[^\]]*\]\(img/([^)\s]+)\)", GUIDE.read_text(encoding="utf-8"))
    assert shown
    for name in shown:
        assert (IMAGES / name).is_file(), f"docs/img/{name} is missing: run ./deidloop screenshots"
        assert (IMAGES / name).stat().st_size < 200 * 1024, name
