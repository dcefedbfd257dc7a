import pytest

pytestmark = pytest.mark.django_db


def test_schema_describes_the_api(client, users):
    client.force_login(users["admin"])
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in ["/api/projects/", "/api/projects/{project_id}/documents/", "/api/projects/{project_id}/import/",
                 "/api/projects/{project_id}/export/", "/api/projects/{project_id}/annotations/"]:
        assert path in paths, path


def test_browsable_docs_are_served_without_a_cdn(client, users):
    client.force_login(users["admin"])
    page = client.get("/api/docs/").content.decode()
    assert "swagger-ui" in page
    assert "cdn." not in page and "jsdelivr" not in page
