"""The loop's settings form: typed fields for the chosen tagger, strategy and self-training policy, word lists
typed or uploaded; a bad value is refused next to its field with a message that names the limit, and nothing
is stored; what is stored is shown again."""
from __future__ import annotations

import html as html_module
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotator.models import AuditEvent, Project
from tests.html_forms import form_values

pytestmark = pytest.mark.django_db

STORED = ("tagger", "strategy", "strategy_params", "self_training", "self_training_policy", "eponyms", "gazetteers",
          "batch_size", "recall_bias_beta", "recall_bias_betas")


@pytest.fixture
def lead(client, users, projects):
    client.force_login(users["lead"])
    return client


@pytest.fixture
def project(projects):
    return projects["A"]


def _url(project) -> str:
    return f"/projects/{project.pk}/loop/"


def _shown(client, project) -> dict[str, str]:
    return form_values(client.get(_url(project)).content.decode(), "settings")


def _snapshot(project) -> dict:
    fresh = Project.objects.get(pk=project.pk)
    return {name: getattr(fresh, name) for name in STORED}


def _error_of(html: str, field_name: str) -> str:
    """The error shown in the block of the field called ``field_name`` ('' if none)."""
    for block in re.findall(r'<div class="field invalid">(.*?)</div>\s*(?=<div|</div|<details|</details|</fieldset)',
                            html, flags=re.DOTALL):
        if f'name="{field_name}"' in block:
            found = re.search(r'<ul class="errorlist"[^>]*>(.*?)</ul>', block, flags=re.DOTALL)
            return html_module.unescape(re.sub(r"<[^>]+>", "", found.group(1))).strip() if found else ""
    return ""


@pytest.mark.parametrize("field, value, message", [
    ("tagger-c1", "-1", "c1 (L1 penalty) must be between 0 and 10"),
    ("tagger-max_iterations", "2.5", "Enter a whole number."),
    ("tagger-epsilon", "nan", "Enter a number."),
    ("strategy-theta", "1.5", "θ (theta) must be between 0 and 1"),
    ("self_training-dev_fraction", "0.9", "Development share must be between 0.05 and 0.5"),
    ("self_training-iterations", "0", "Iterations must be between 1 and 20"),
    ("self_training-max_pool_documents", "", "This field is required."),
    ("gazetteer-HOSPITAL", "La Paz\n" + "H" * 201,
     f"entry 2 ({'H' * 30}…) is 201 characters long; at most 200 are allowed"),
    ("eponyms", "\n".join(f"Eponym {i}" for i in range(5001)), "at most 5,000 entries per list; this one has 5,001"),
    ("recall_bias_beta-FECHAS", "7", "Select a valid choice. 7 is not one of the available choices."),
])
def test_a_value_out_of_range_is_refused_next_to_its_field_and_nothing_changes(lead, project, field, value, message):
    before = _snapshot(project)
    response = lead.post(_url(project), {**_shown(lead, project), field: value, "batch_size": "7"})
    assert response.status_code == 400
    assert _error_of(response.content.decode(), field) == message
    assert _snapshot(project) == before
    assert not AuditEvent.objects.filter(project=project, detail__has_key="settings").exists()


def test_uploaded_lists_are_checked_and_added_to_the_typed_ones(lead, project):
    before = _snapshot(project)
    shown = _shown(lead, project)
    latin1 = SimpleUploadedFile("names.txt", "Peña\n".encode("latin-1"), content_type="text/plain")
    response = lead.post(_url(project), {**shown, "gazetteer_file": latin1, "gazetteer_file_label": "HOSPITAL"})
    assert response.status_code == 400
    assert _error_of(response.content.decode(), "gazetteer_file") == (
        "the file is not UTF-8 text (byte 3 cannot be read); save it as plain UTF-8 text, one entry per line")
    big = SimpleUploadedFile("big.txt", b"Parkinson\n" * 60_000, content_type="text/plain")
    response = lead.post(_url(project), {**shown, "eponyms_file": big})
    assert _error_of(response.content.decode(), "eponyms_file") == "the file is 586 KB; a list may be at most 512 KB"
    unnamed = SimpleUploadedFile("h.txt", b"Hospital La Paz\n", content_type="text/plain")
    response = lead.post(_url(project), {**shown, "gazetteer_file": unnamed})
    assert _error_of(response.content.decode(), "gazetteer_file_label") == "choose the list the file's entries go to"
    assert _snapshot(project) == before

    hospitals = SimpleUploadedFile("h.txt", "\ufeffHospital La Paz\r\nClínica Ruber\n\nHospital La Paz\n".encode(),
                                   content_type="text/plain")
    eponyms = SimpleUploadedFile("e.txt", b"Crohn\nParkinson\n", content_type="text/plain")
    response = lead.post(_url(project), {**shown, "gazetteer-HOSPITAL": "Hospital 12 de Octubre",
                                         "gazetteer_file": hospitals, "gazetteer_file_label": "HOSPITAL",
                                         "eponyms": "Parkinson", "eponyms_file": eponyms})
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.gazetteers == {"HOSPITAL": ["Hospital 12 de Octubre", "Hospital La Paz", "Clínica Ruber"]}
    assert project.eponyms == ["Parkinson", "Crohn"]


def test_a_saved_form_shows_its_values_again(lead, project, users):
    project.tagger = {"kind": "crf", "params": {"warm_start": False}}  # set through the API: not on the page
    project.save()
    shown = _shown(lead, project)
    assert "tagger-warm_start" not in shown and "tagger-feature_cache" not in shown
    assert {k: v for k, v in shown.items() if k.startswith("tagger-")} == {
        "tagger-c1": "0.1", "tagger-c2": "0.05", "tagger-max_iterations": "50", "tagger-epsilon": "1e-05",
        "tagger-all_possible_transitions": "on", "tagger-gold_lexicon": "on"}
    posted = {**shown, "tagger-c1": "0.25", "tagger-all_possible_transitions": None,
              "strategy-theta": "0.65", "self_training": "on", "self_training-iterations": "3",
              "self_training-selection": None, "gazetteer-CALLE": "Calle Mayor\n Gran Vía ",
              "eponyms": "Parkinson\nAlzheimer"}
    response = lead.post(_url(project), {k: v for k, v in posted.items() if v is not None})
    assert response.status_code == 302
    project.refresh_from_db()
    assert project.tagger == {"kind": "crf", "params": {"warm_start": False, "c1": 0.25,
                                                        "all_possible_transitions": False}}
    assert (project.strategy, project.strategy_params) == ("LCUB_6", {"theta": 0.65})
    assert project.self_training and project.self_training_policy == {"iterations": 3, "selection": False}
    assert project.gazetteers == {"CALLE": ["Calle Mayor", "Gran Vía"]}
    event = AuditEvent.objects.get(project=project, detail__has_key="settings")
    assert event.user == users["lead"]
    assert event.detail["settings"]["strategy_params"] == [{}, {"theta": 0.65}]

    again = _shown(lead, project)
    assert again["tagger-c1"] == "0.25" and "tagger-all_possible_transitions" not in again
    assert again["strategy-theta"] == "0.65" and again["self_training-iterations"] == "3"
    assert "self_training-selection" not in again and again["self_training"] == "on"
    assert again["gazetteer-CALLE"] == "Calle Mayor\nGran Vía" and again["eponyms"] == "Parkinson\nAlzheimer"
    # Posting it back unchanged changes nothing and records nothing more.
    assert lead.post(_url(project), again).status_code == 302
    assert AuditEvent.objects.filter(project=project, detail__has_key="settings").count() == 1


def test_a_beta_of_its_own_for_some_phi_types(lead, project):
    shown = _shown(lead, project)
    assert {label for label in project.labels if shown.get(f"recall_bias_beta-{label}") == ""} == set(project.labels)
    posted = {**shown, "recall_bias_beta": "4", "recall_bias_beta-FECHAS": "20", "recall_bias_beta-PROFESION": "0",
              "recall_bias_beta-HOSPITAL": "4"}
    assert lead.post(_url(project), posted).status_code == 302
    project.refresh_from_db()
    # HOSPITAL's β is that of every type: only the types that differ are stored.
    assert project.recall_bias_beta == 4 and project.recall_bias_betas == {"FECHAS": 20.0, "PROFESION": 0.0}
    again = _shown(lead, project)
    assert (again["recall_bias_beta-FECHAS"], again["recall_bias_beta-PROFESION"]) == ("20", "0")
    assert again["recall_bias_beta-HOSPITAL"] == "" and again["recall_bias_beta"] == "4"
    event = AuditEvent.objects.get(project=project, detail__has_key="settings")
    assert event.detail["settings"]["recall_bias_betas"] == [{}, {"FECHAS": 20.0, "PROFESION": 0.0}]
    # Back to one β for every type.
    cleared = {**again, "recall_bias_beta-FECHAS": "", "recall_bias_beta-PROFESION": ""}
    assert lead.post(_url(project), cleared).status_code == 302
    project.refresh_from_db()
    assert project.recall_bias_betas == {} and project.recall_bias_beta == 4


def test_choosing_another_tagger_or_strategy_brings_its_own_fields(lead, project):
    parameters = f"/projects/{project.pk}/loop/parameters/"
    unigram = lead.get(parameters, {"tagger_kind": "unigram"}).content.decode()
    assert 'name="tagger-lowercase"' in unigram and 'name="tagger-c1"' not in unigram
    measured = lead.get(parameters, {"strategy": "ROI_measured"}).content.decode()
    assert re.search(r'name="strategy-value_seconds"[^>]*value="30.0"|value="30.0"[^>]*name="strategy-value_seconds"',
                     measured)
    assert "No parameters to set." in lead.get(parameters, {"strategy": "random"}).content.decode()
    assert lead.get(parameters, {"tagger_kind": "svm"}).status_code == 400
    assert lead.get(parameters, {"strategy": "LCUB_11"}).status_code == 400

    # A browser without scripts posts the CRF's fields under the unigram tagger: shown again, nothing stored.
    before = _snapshot(project)
    response = lead.post(_url(project), {**_shown(lead, project), "tagger_kind": "unigram", "strategy": "ELB_2"})
    assert response.status_code == 400
    html = response.content.decode()
    assert _error_of(html, "tagger_kind").startswith("the parameters below are now those of your choice")
    assert _error_of(html, "strategy").startswith("the parameters below are now those of your choice")
    assert _snapshot(project) == before
    shown = form_values(html, "settings")
    assert shown["tagger-lowercase"] == "on" and "tagger-c1" not in shown and shown["strategy-rho"] == "1.0"
    assert lead.post(_url(project), shown).status_code == 302
    project.refresh_from_db()
    assert project.tagger == {"kind": "unigram", "params": {}}
    assert (project.strategy, project.strategy_params) == ("ELB_2", {})


def test_a_strategy_set_outside_the_page_is_shown_and_kept(lead, project):
    project.strategy, project.strategy_params = "lcub", {"theta": 0.45}  # a kind, as the command line names it
    project.save()
    shown = _shown(lead, project)
    assert shown["strategy"] == "lcub" and shown["strategy-theta"] == "0.45"
    assert lead.post(_url(project), shown).status_code == 302
    project.refresh_from_db()
    assert (project.strategy, project.strategy_params) == ("lcub", {"theta": 0.45})
    assert not AuditEvent.objects.filter(project=project, detail__has_key="settings").exists()
