"""A real Kubernetes control plane for the envtest suite (tests/envtest/): etcd, kube-apiserver
and kube-controller-manager on loopback, on ports picked free, stopped by the processes this
module started and by nothing else.

The binaries follow controller-runtime envtest's convention: `$KUBEBUILDER_ASSETS` is a folder
holding `etcd`, `kube-apiserver` and (beyond envtest's own pair) `kube-controller-manager` of
the same version; `setup-envtest use 1.36.x -p path` gives the first two, the Kubernetes release
page the third. Without it, the xz files of the shared data (`../shared/envtest/` beside the
repo, found as tests/support/mirror.py finds `../shared/upstream`) are unpacked into a cache
folder, each checked against the sha256 sums the shared data lists before and after `xz -d`.

What runs, as ../shared/envtest/README.md found works on two cores: the API server with the
RBAC authorizer, a serving certificate and a client CA made here, a service-account key pair,
`--allow-privileged` (the platform's DaemonSets are privileged) and no endpoint reconciler;
the controller manager with the controllers asked for (clusterrole-aggregation: Kubeflow's
aggregated ClusterRoles get their rules the way a cluster gives them). No kubelet or scheduler:
no pod ever runs. Every start waits on a readiness condition (etcd's /health, the API server's
/readyz, the controller manager's /healthz), never a fixed sleep.
"""

from __future__ import annotations

import datetime
import hashlib
import ipaddress
import json
import lzma
import os
import socket
import ssl
import subprocess
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tooling.tools import write_whole
from tooling.waiting import WaitTimeout, wait_for

REPO = Path(__file__).resolve().parents[2]
ASSETS_ENV = "KUBEBUILDER_ASSETS"
SHARED_ENVTEST = REPO.parent / "shared" / "envtest"
ETCD, APISERVER, CONTROLLER_MANAGER = "etcd", "kube-apiserver", "kube-controller-manager"
BINARIES = (ETCD, APISERVER, CONTROLLER_MANAGER)
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mlplatform" / "envtest"
LOOPBACK = "127.0.0.1"
SERVICE_CLUSTER_IP_RANGE = "10.0.0.0/16"
"""Room for every Service of a render (a /16: 65k cluster IPs)."""
START_TIMEOUT = 120.0
"""Seconds each process has to become ready (the API server takes 5 to 15 s on two cores)."""
POLL = 0.1


class EnvtestError(Exception):
    """The control plane cannot start; the message says what is missing and how to get it."""


def missing(environ: Mapping[str, str] = os.environ) -> str | None:
    """Why the control plane's binaries cannot be had here, or None when they can."""
    configured = environ.get(ASSETS_ENV)
    if configured:
        absent = [name for name in BINARIES if not os.access(Path(configured) / name, os.X_OK)]
        if absent:
            return (
                f"{ASSETS_ENV}={configured} has no executable {', '.join(absent)}: point it at a folder with etcd and "
                f"kube-apiserver (`setup-envtest use 1.36.x -p path`) and a kube-controller-manager of the same version"
            )
        return None
    absent = [f"{name}.xz" for name in BINARIES if not (SHARED_ENVTEST / f"{name}.xz").is_file()]
    if absent:
        return (
            f"no envtest binaries: {ASSETS_ENV} is not set and {SHARED_ENVTEST} lacks {', '.join(absent)}; set "
            f"{ASSETS_ENV} to a folder with etcd, kube-apiserver and kube-controller-manager (v1.36), or put the shared "
            f"data beside the repo"
        )
    return None


def assets(environ: Mapping[str, str] = os.environ) -> Path:
    """The folder that holds the three binaries: `$KUBEBUILDER_ASSETS`, else the shared data
    unpacked into the cache."""
    problem = missing(environ)
    if problem:
        raise EnvtestError(problem)
    configured = environ.get(ASSETS_ENV)
    return Path(configured) if configured else unpacked(SHARED_ENVTEST, CACHE)


def _sums(path: Path) -> dict[str, str]:
    """`sha256sum` output: file name -> digest."""
    found = {}
    for line in path.read_text().splitlines():
        digest, _, name = line.strip().partition("  ")
        if digest and name:
            found[name.lstrip("*")] = digest
    return found


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def unpacked(shared: Path, cache: Path) -> Path:
    """Each binary of `shared` (its `.xz`) decompressed into a folder of `cache` named by the
    sums, once: a binary already there is kept only if its sum matches."""
    sums, xz_sums = _sums(shared / "SHA256SUMS"), _sums(shared / "SHA256SUMS.xz")
    into = cache / hashlib.sha256((shared / "SHA256SUMS").read_bytes()).hexdigest()[:16]
    into.mkdir(parents=True, exist_ok=True)
    for name in BINARIES:
        if name not in sums or f"{name}.xz" not in xz_sums:
            raise EnvtestError(f"{shared}: SHA256SUMS and SHA256SUMS.xz must list {name} and {name}.xz")
        target = into / name
        if target.is_file() and _sha256(target) == sums[name]:
            continue
        packed = (shared / f"{name}.xz").read_bytes()
        if hashlib.sha256(packed).hexdigest() != xz_sums[f"{name}.xz"]:
            raise EnvtestError(f"{shared / (name + '.xz')}: sha256 differs from SHA256SUMS.xz; the shared data is damaged")
        data = lzma.decompress(packed)
        if hashlib.sha256(data).hexdigest() != sums[name]:
            raise EnvtestError(f"{name} unpacked from {shared}: sha256 differs from SHA256SUMS; the shared data is damaged")
        write_whole(target, data, mode=0o755)
    return into


# --- certificates ---------------------------------------------------------------------


@dataclass(frozen=True)
class Pki:
    """The files the control plane and its clients read, all in one folder."""

    ca: Path
    serving_cert: Path
    serving_key: Path
    admin_cert: Path
    admin_key: Path
    controller_manager_cert: Path
    controller_manager_key: Path
    service_account_key: Path
    service_account_public_key: Path


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


def _certificate(
    subject: x509.Name,
    key: ec.EllipticCurvePrivateKey,
    issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None = None,
    usage: Sequence[x509.ObjectIdentifier] = (),
    addresses: Sequence[str] = (),
) -> bytes:
    now = datetime.datetime.now(datetime.UTC)
    issuer_name, signer = issuer or (subject, key)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=issuer is None, path_length=None), critical=True)
    )
    if issuer is None:
        builder = builder.add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True  # cert and CRL signing
        )
    if usage:
        builder = builder.add_extension(x509.ExtendedKeyUsage(list(usage)), critical=False)
    if addresses:
        names: list[x509.GeneralName] = [x509.IPAddress(ipaddress.ip_address(a)) for a in addresses]
        builder = builder.add_extension(x509.SubjectAlternativeName([*names, x509.DNSName("localhost")]), critical=False)
    return builder.sign(signer, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


def _name(common: str, organization: str | None = None) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.COMMON_NAME, common)]
    if organization:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, organization))
    return x509.Name(attributes)


def make_pki(folder: Path) -> Pki:
    """A CA that signs the API server's serving certificate (127.0.0.1) and two clients: an
    administrator (group system:masters, as a kubeadm cluster's admin.conf) and the controller
    manager (the user its bootstrap RBAC binding names); and the service-account signing key."""
    folder.mkdir(parents=True, exist_ok=True)
    ca_key, ca_name = _key(), _name("envtest-ca")
    issuer = (ca_name, ca_key)
    pki = Pki(*(folder / n for n in ("ca.crt", "apiserver.crt", "apiserver.key", "admin.crt", "admin.key", "kcm.crt", "kcm.key", "sa.key", "sa.pub")))
    pki.ca.write_bytes(_certificate(ca_name, ca_key))
    serving = _key()
    pki.serving_cert.write_bytes(_certificate(_name("kube-apiserver"), serving, issuer, [ExtendedKeyUsageOID.SERVER_AUTH], [LOOPBACK]))
    pki.serving_key.write_bytes(_pem(serving))
    for cert, key_path, subject in (
        (pki.admin_cert, pki.admin_key, _name("envtest-admin", "system:masters")),
        (pki.controller_manager_cert, pki.controller_manager_key, _name("system:kube-controller-manager")),
    ):
        key = _key()
        cert.write_bytes(_certificate(subject, key, issuer, [ExtendedKeyUsageOID.CLIENT_AUTH]))
        key_path.write_bytes(_pem(key))
    signing = _key()
    pki.service_account_key.write_bytes(_pem(signing))
    pki.service_account_public_key.write_bytes(
        signing.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return pki


# --- processes ------------------------------------------------------------------------


def free_port() -> int:
    """A TCP port on the loopback address nobody listens on now (the kernel's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Process:
    """One process this harness started, with its log."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def tail(self, lines: int = 15) -> str:
        text = self.log.read_text(errors="replace").splitlines() if self.log.is_file() else []
        return "\n".join(text[-lines:])

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM to this process (its pid, nothing else), SIGKILL if it lingers."""
        if self.popen.poll() is not None:
            return
        self.popen.terminate()
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(timeout)


def _start(name: str, args: list[str], folder: Path) -> Process:
    log = folder / f"{name}.log"
    with log.open("wb") as out:
        popen = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=folder)
    return Process(name, popen, log)


def _answers(url: str, context: ssl.SSLContext | None) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2, context=context) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def _wait_ready(process: Process, what: str, url: str, context: ssl.SSLContext | None) -> None:
    def pending() -> list[str]:
        if process.popen.poll() is not None:
            raise EnvtestError(f"{process.name} exited with {process.popen.returncode} before {what}:\n{process.tail()}")
        return [] if _answers(url, context) else [f"{url} not yet 200"]

    try:
        wait_for(f"{process.name}: {what}", pending, timeout=START_TIMEOUT, interval=POLL)
    except WaitTimeout as timeout:
        raise EnvtestError(f"{timeout}\n{process.name}'s log ends:\n{process.tail()}") from None


@dataclass(frozen=True)
class ControlPlane:
    """A running control plane: where to reach it and how to sign in as its administrator."""

    url: str
    pki: Pki
    folder: Path
    processes: tuple[Process, ...]

    def ssl_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.pki.ca))
        context.load_cert_chain(str(self.pki.admin_cert), str(self.pki.admin_key))
        return context

    def configuration(self) -> Any:
        """A kubernetes.client.Configuration for the administrator (group system:masters)."""
        from kubernetes import client

        configuration = client.Configuration()
        configuration.host = self.url
        configuration.ssl_ca_cert = str(self.pki.ca)
        configuration.cert_file = str(self.pki.admin_cert)
        configuration.key_file = str(self.pki.admin_key)
        configuration.connection_pool_maxsize = 16
        return configuration


def _kubeconfig(path: Path, url: str, pki: Pki, cert: Path, key: Path) -> Path:
    """A kubeconfig for a client certificate (JSON is YAML)."""
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "envtest", "cluster": {"server": url, "certificate-authority": str(pki.ca)}}],
                "users": [{"name": "user", "user": {"client-certificate": str(cert), "client-key": str(key)}}],
                "contexts": [{"name": "envtest", "context": {"cluster": "envtest", "user": "user"}}],
                "current-context": "envtest",
            }
        )
    )
    return path


@contextmanager
def running(folder: Path, binaries: Path | None = None, controllers: Sequence[str] = ("clusterrole-aggregation",)) -> Iterator[ControlPlane]:
    """etcd, kube-apiserver and (with `controllers`) kube-controller-manager, each ready
    before the next starts; on leaving, each stopped by its own pid, the last started first."""
    binaries = binaries or assets()
    folder.mkdir(parents=True, exist_ok=True)
    pki = make_pki(folder / "pki")
    started: list[Process] = []
    with ExitStack() as stack:
        stack.callback(_stop_all, started)
        client_port, peer_port = free_port(), free_port()
        etcd_url = f"http://{LOOPBACK}:{client_port}"
        started.append(
            _start(
                ETCD,
                [
                    str(binaries / ETCD),
                    f"--data-dir={folder / 'etcd'}",
                    f"--listen-client-urls={etcd_url}",
                    f"--advertise-client-urls={etcd_url}",
                    f"--listen-peer-urls=http://{LOOPBACK}:{peer_port}",
                    f"--initial-advertise-peer-urls=http://{LOOPBACK}:{peer_port}",
                    "--unsafe-no-fsync=true",
                ],
                folder,
            )
        )
        _wait_ready(started[-1], "serving clients", f"{etcd_url}/health", None)
        port = free_port()
        url = f"https://{LOOPBACK}:{port}"
        started.append(
            _start(
                APISERVER,
                [
                    str(binaries / APISERVER),
                    f"--etcd-servers={etcd_url}",
                    f"--bind-address={LOOPBACK}",
                    f"--advertise-address={LOOPBACK}",
                    f"--secure-port={port}",
                    f"--cert-dir={folder / 'apiserver-certs'}",
                    f"--tls-cert-file={pki.serving_cert}",
                    f"--tls-private-key-file={pki.serving_key}",
                    f"--client-ca-file={pki.ca}",
                    f"--service-account-issuer={url}",
                    f"--service-account-key-file={pki.service_account_public_key}",
                    f"--service-account-signing-key-file={pki.service_account_key}",
                    "--authorization-mode=RBAC",
                    f"--service-cluster-ip-range={SERVICE_CLUSTER_IP_RANGE}",
                    "--allow-privileged=true",
                    "--endpoint-reconciler-type=none",
                ],
                folder,
            )
        )
        plane = ControlPlane(url, pki, folder, ())
        _wait_ready(started[-1], "ready (/readyz)", f"{url}/readyz", plane.ssl_context())
        if controllers:
            kcm_port = free_port()
            kubeconfig = _kubeconfig(folder / "kcm.kubeconfig", url, pki, pki.controller_manager_cert, pki.controller_manager_key)
            started.append(
                _start(
                    CONTROLLER_MANAGER,
                    [
                        str(binaries / CONTROLLER_MANAGER),
                        f"--kubeconfig={kubeconfig}",
                        f"--authentication-kubeconfig={kubeconfig}",
                        f"--authorization-kubeconfig={kubeconfig}",
                        f"--controllers={','.join(controllers)}",
                        # Each controller signs in as its own service account, with the rights the
                        # bootstrap policy gives it (system:controller:<name>), as on a real cluster.
                        "--use-service-account-credentials=true",
                        "--leader-elect=false",
                        f"--bind-address={LOOPBACK}",
                        f"--secure-port={kcm_port}",
                        f"--cert-dir={folder / 'kcm-certs'}",
                    ],
                    folder,
                )
            )
            _wait_ready(started[-1], "healthy (/healthz)", f"https://{LOOPBACK}:{kcm_port}/healthz", _insecure())
        yield ControlPlane(url, pki, folder, tuple(started))


def _stop_all(started: list[Process]) -> None:
    for process in reversed(started):
        process.stop()


def _insecure() -> ssl.SSLContext:
    """The controller manager serves /healthz with a certificate it made itself, for loopback."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context
