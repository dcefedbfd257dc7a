"""The import page's two steps, for tests that only need the result: upload, then Import on the preview."""
from __future__ import annotations


def upload_and_confirm(client, project_id: int, data: dict, **choices):
    """POST ``data`` to the upload form, then confirm the preview it leads to (``choices`` added, e.g.
    ``unknown_labels="add"``); the upload form's response when it refused the upload."""
    response = client.post(f"/projects/{project_id}/import/", data)
    if response.status_code != 302:
        return response
    assert "/import/preview/" in response["Location"], response["Location"]
    return client.post(response["Location"], {"action": "import", **choices})
