"""One web process: uvicorn serving ``config.asgi:application`` on a listening socket it inherits.

    python -m config.webserver --fd N [--proxy-headers]

The launcher (config.launcher) opens the web port once and starts ``DEIDLOOP_WEB_WORKERS`` of these on it.
uvicorn's own ``--fd`` takes every inherited socket for a Unix one, so the connections it accepts never get
TCP_NODELAY and each small response waits for the client's delayed acknowledgement (about 40 ms); the socket is
made here with the family it really has.
"""
from __future__ import annotations

import argparse
import socket

import uvicorn


def config(*, proxy_headers: bool, app="config.asgi:application") -> uvicorn.Config:
    """How each web process serves. ``proxy_headers``: the client's address is the one the reverse proxy
    forwards (docker-compose.yml); without it, the connection's own, whatever the request's headers say."""
    return uvicorn.Config(
        app,
        # Django's and Channels' applications have no startup or shutdown hooks.
        lifespan="off",
        proxy_headers=proxy_headers,
        forwarded_allow_ips="*" if proxy_headers else None,
        server_header=False,
        # A request still running at SIGTERM gets this long to finish.
        timeout_graceful_shutdown=15,
    )


def inherited_socket(fd: int) -> socket.socket:
    """The listening socket behind ``fd``, with the family and type it really has."""
    return socket.socket(fileno=fd)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fd", type=int, required=True, help="the inherited listening socket")
    parser.add_argument("--proxy-headers", action="store_true",
                        help="take the client's address from the reverse proxy's forwarding headers")
    options = parser.parse_args(argv)
    uvicorn.Server(config(proxy_headers=options.proxy_headers)).run(sockets=[inherited_socket(options.fd)])


if __name__ == "__main__":
    main()
