"""Several hosts on one machine, for tests: Linux network namespaces joined by veth pairs to a bridge.

Each host is a network namespace with a private address (``10.213.N.K/24``, N picked per test run so that two
runs do not share a subnet) and starts its processes in a UTS namespace of their own with the host's name, so
that a process there sees another machine: its own address and hostname, nothing shared with the other hosts
but what travels over the bridge. The bridge has an address in the test's own namespace (``.1``), so the test
reaches every host, and no route out: nothing leaves the machine.

Needs root, ``ip`` (iproute2) and ``unshare`` (util-linux); :func:`unavailable` says why not when they are
missing. :meth:`Network.close` kills what the hosts still run and removes the namespaces and the bridge.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check, timeout=30)


def unavailable() -> str | None:
    """Why hosts cannot be made here, or None when they can."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "unshare"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed"
    probe = f"dlprobe{os.getpid() % 100000}"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"cannot create a network namespace: {made.stderr.strip()}"
    _ip("netns", "del", probe, check=False)
    return None


@dataclass
class Host:
    """A network namespace with one address; its processes run under ``hostname``."""

    namespace: str
    hostname: str
    address: str
    processes: list[subprocess.Popen] = field(default_factory=list)

    def command(self, argv: list[str], *, user: str | None = None) -> list[str]:
        """``argv`` run in this host (as ``user`` when given), under the host's name."""
        if user is not None:
            argv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "--", *argv]
        # ip and unshare exec what follows (no fork), so the process started is the one that runs argv.
        return ["ip", "netns", "exec", self.namespace, "unshare", "--uts", "--",
                "sh", "-c", 'hostname "$0" && exec "$@"', self.hostname, *argv]

    def start(self, argv: list[str], *, log: Path, env: dict[str, str], cwd: Path | None = None,
              user: str | None = None, stdin: str | None = None) -> subprocess.Popen:
        """Start ``argv`` in its own process group, its output appended to ``log``."""
        with log.open("ab") as output:
            process = subprocess.Popen(
                self.command(argv, user=user), cwd=cwd, env=env, stdout=output, stderr=subprocess.STDOUT,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL, start_new_session=True,
            )
        if stdin is not None:
            process.stdin.write(stdin.encode())
            process.stdin.close()
        self.processes.append(process)
        return process

    def run(self, argv: list[str], *, env: dict[str, str], cwd: Path | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run(self.command(argv), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)

    def kill(self, process: subprocess.Popen) -> None:
        """SIGKILL the process and its whole group at once, as a host that dies."""
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.wait(timeout=10)


class Network:
    """A bridge in the test's namespace and the hosts attached to it."""

    def __init__(self) -> None:
        self.tag = uuid.uuid4().hex[:6]
        self.subnet = 1 + os.getpid() % 250
        self.bridge = f"dlbr{self.tag}"
        self.hosts: list[Host] = []

    def open(self) -> "Network":
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        return self

    @property
    def gateway(self) -> str:
        return f"10.213.{self.subnet}.1"

    @property
    def cidr(self) -> str:
        return f"10.213.{self.subnet}.0/24"

    def add_host(self, hostname: str) -> Host:
        index = len(self.hosts) + 2
        namespace, outside, inside = f"dl{self.tag}{index}", f"dlv{self.tag}{index}", f"dlp{self.tag}{index}"
        host = Host(namespace=namespace, hostname=hostname, address=f"10.213.{self.subnet}.{index}")
        _ip("netns", "add", namespace)
        self.hosts.append(host)
        _ip("link", "add", outside, "type", "veth", "peer", "name", inside)
        _ip("link", "set", inside, "netns", namespace)
        _ip("link", "set", outside, "master", self.bridge)
        _ip("link", "set", outside, "up")
        _ip("-n", namespace, "addr", "add", f"{host.address}/24", "dev", inside)
        _ip("-n", namespace, "link", "set", inside, "up")
        _ip("-n", namespace, "link", "set", "lo", "up")
        return host

    def close(self) -> None:
        """Stop what every host still runs (SIGTERM to each process group, then SIGKILL to the groups and to
        whatever else is left in the namespace), then remove the namespaces and the bridge."""
        running = [process for host in self.hosts for process in host.processes if process.poll() is None]
        for process in running:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 15
        for process in running:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for host in self.hosts:
            for process in host.processes:
                try:
                    os.killpg(process.pid, signal.SIGKILL)  # what is left of the group, stopped or not
                except ProcessLookupError:
                    pass
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    pass
            # Anything they started in a group of its own (the launcher's web processes) is still in the namespace.
            for pid in _ip("netns", "pids", host.namespace, check=False).stdout.split():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            _ip("netns", "del", host.namespace, check=False)  # its veth pair goes with it
        _ip("link", "del", self.bridge, check=False)


def wait_for_port(address: str, port: int, *, timeout: float, process: subprocess.Popen, log: Path) -> None:
    """Wait until ``address:port`` accepts connections; fail at once with ``log`` when ``process`` exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[-1]} exited with {process.returncode}:\n{tail(log)}")
        with socket.socket() as probe:
            probe.settimeout(0.5)
            if probe.connect_ex((address, port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {address}:{port} after {timeout} s:\n{tail(log)}")


def wait_for_text(log: Path, text: str, *, timeout: float, process: subprocess.Popen) -> None:
    """Wait until ``text`` appears in ``log``; fail at once when ``process`` exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            raise RuntimeError(f"the process exited with {process.returncode}:\n{tail(log)}")
        time.sleep(0.1)
    raise RuntimeError(f"{text!r} did not appear in {log} after {timeout} s:\n{tail(log)}")


def tail(log: Path, characters: int = 6000) -> str:
    return log.read_text(errors="replace")[-characters:] if log.exists() else ""
