"""HTTPS in front of the local Elasticsearch, with a certificate signed by a CA of the test's own, as ES 8/9
clusters serve it (their CA's PEM is ``config/certs/http_ca.crt``). The 7.9.2 OSS build has no TLS of its
own: this proxy terminates TLS and forwards the bytes, so the client's certificate checks run for real."""

from __future__ import annotations

import socket
import ssl
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit


def make_certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A CA, and a server certificate for 127.0.0.1 signed by it: ``(ca.crt, server.crt, server.key)``."""

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True, timeout=60)

    openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "2",
        "-subj",
        "/CN=LeakLens test CA",
    )
    openssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"
    )
    (folder / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n", encoding="utf-8")
    openssl(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.crt",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    )
    return folder / "ca.crt", folder / "server.crt", folder / "server.key"


@dataclass
class TlsProxy:
    target: str
    """The plain-HTTP Elasticsearch URL the bytes go to."""
    folder: Path
    url: str = ""
    ca_path: Path = Path()
    _listener: socket.socket | None = None
    _threads: list[threading.Thread] = field(default_factory=list)

    def start(self) -> TlsProxy:
        self.ca_path, cert, key = make_certificates(self.folder)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"https://127.0.0.1:{self._listener.getsockname()[1]}"
        self._spawn(self._accept, context)
        return self

    def stop(self) -> None:
        if self._listener is not None:
            self._listener.close()

    def _spawn(self, target, *args) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _accept(self, context: ssl.SSLContext) -> None:
        target = urlsplit(self.target)
        while True:
            try:
                raw, _ = self._listener.accept()
            except OSError:  # the listener was closed
                return
            try:
                client = context.wrap_socket(raw, server_side=True)
            except (ssl.SSLError, OSError):  # the client refused the certificate: what some tests want
                raw.close()
                continue
            upstream = socket.create_connection((target.hostname, target.port))
            self._spawn(_pump, client, upstream)
            self._spawn(_pump, upstream, client)


def _pump(source: socket.socket, sink: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (source, sink):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
