"""config.webserver: uvicorn on an inherited socket, trusting forwarding headers only behind the proxy."""
from __future__ import annotations

import json
import socket
import threading
import time

import pytest
import requests
import uvicorn

from config import webserver


async def echo_client(scope, receive, send):
    """An ASGI app answering with the client's address as the server saw it."""
    await receive()
    body = json.dumps({"client": scope["client"][0]}).encode()
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": body})


@pytest.fixture
def serve():
    started: list[tuple[uvicorn.Server, threading.Thread]] = []

    def start(*, proxy_headers: bool) -> str:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        # As the launcher hands it over: a bare file descriptor, its family to be found again.
        inherited = webserver.inherited_socket(listener.detach())
        server = uvicorn.Server(webserver.config(proxy_headers=proxy_headers, app=echo_client))
        thread = threading.Thread(target=server.run, kwargs={"sockets": [inherited]}, daemon=True)
        thread.start()
        started.append((server, thread))
        deadline = time.monotonic() + 30
        while not server.started:
            assert time.monotonic() < deadline, "uvicorn did not start within 30 s"
            time.sleep(0.02)
        return f"http://127.0.0.1:{inherited.getsockname()[1]}/"

    yield start
    for server, thread in started:
        server.should_exit = True
        thread.join(timeout=30)


def test_without_the_proxy_a_forwarded_address_is_ignored(serve):
    url = serve(proxy_headers=False)
    answer = requests.get(url, headers={"X-Forwarded-For": "10.9.8.7"}, timeout=10)
    assert answer.json() == {"client": "127.0.0.1"}


def test_behind_the_proxy_the_forwarded_address_is_the_clients(serve):
    url = serve(proxy_headers=True)
    answer = requests.get(url, headers={"X-Forwarded-For": "10.9.8.7"}, timeout=10)
    assert answer.json() == {"client": "10.9.8.7"}


def test_the_inherited_socket_is_taken_for_the_tcp_socket_it_is():
    """uvicorn's own --fd takes it for a Unix socket, so asyncio leaves Nagle's algorithm on for the connections
    it accepts (TCP_NODELAY is set for TCP ones only): each small answer then waits about 40 ms for the
    client's delayed acknowledgement."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    inherited = webserver.inherited_socket(listener.detach())
    try:
        assert (inherited.family, inherited.type) == (socket.AF_INET, socket.SOCK_STREAM)
    finally:
        inherited.close()
