"""A throw-away certificate authority and serving certificate for the simulated API server.

kubectl (client-go) sends bearer tokens only over TLS (kubernetes/kubectl#744), so the simulated
cluster also listens on HTTPS. The key pair is generated once per process (EC P-256, fast) for
127.0.0.1/localhost and lives only in memory and in the kubeconfigs written for it, unless a
cluster is given a state file (``load_identity``/``save_identity``): then the admin token and this
material are kept there (mode 0600) so a restarted simulator presents the same CA, serving
certificate and token, and a restart is only an outage to its clients, as with a real API server.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import os
import ssl
import tempfile
import threading
from dataclasses import dataclass

_lock = threading.Lock()
_material: TlsMaterial | None = None


@dataclass(frozen=True)
class TlsMaterial:
    ca_pem: bytes
    cert_pem: bytes  # the serving certificate followed by the CA (a full chain)
    key_pem: bytes

    def server_context(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        # ssl can only load a chain from files; write them to a private temp dir just long enough.
        with tempfile.TemporaryDirectory(prefix="volcano-sim-tls-") as tmp:
            cert, key = os.path.join(tmp, "tls.crt"), os.path.join(tmp, "tls.key")
            with open(cert, "wb") as f:
                f.write(self.cert_pem)
            fd = os.open(key, os.O_WRONLY | os.O_CREAT, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(self.key_pem)
            ctx.load_cert_chain(cert, key)
        return ctx


def material() -> TlsMaterial:
    """The process-wide CA + serving certificate (created on first use)."""
    global _material
    with _lock:
        if _material is None:
            _material = _generate()
        return _material


def new_material() -> TlsMaterial:
    """A fresh CA + serving certificate (not the process-wide one)."""
    return _generate()


def load_identity(path: str | os.PathLike) -> tuple[str, TlsMaterial] | None:
    """(admin token, TLS material) from a state file written by ``save_identity``; None when the
    file is absent, unreadable, malformed, or its serving certificate expires within a day (the
    caller then makes a new identity and saves it)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        token = data["admin_token"]
        mat = TlsMaterial(
            ca_pem=data["ca_pem"].encode(),
            cert_pem=data["cert_pem"].encode(),
            key_pem=data["key_pem"].encode(),
        )
        if not isinstance(token, str) or not token:
            return None
        from cryptography import x509

        cert = x509.load_pem_x509_certificate(mat.cert_pem)
        if cert.not_valid_after_utc < dt.datetime.now(dt.UTC) + dt.timedelta(days=1):
            return None
        mat.server_context()  # the key must match the certificate
    except (OSError, ValueError, KeyError, TypeError, AttributeError, ssl.SSLError):
        return None
    return token, mat


def save_identity(path: str | os.PathLike, admin_token: str, mat: TlsMaterial) -> None:
    """Write the admin token and TLS material (private key included) to ``path``, mode 0600,
    atomically (a temp file renamed over it). Other keys of an existing file (``epoch``) are kept."""
    data = _read_state(path)
    data.update(
        {
            "admin_token": admin_token,
            "ca_pem": mat.ca_pem.decode(),
            "cert_pem": mat.cert_pem.decode(),
            "key_pem": mat.key_pem.decode(),
        }
    )
    _write_state(path, data)


def bump_epoch(path: str | os.PathLike) -> int:
    """Increment the run counter ("epoch") kept in the state file ``path`` and return it: 1 on the
    first run (no file, or a file without a valid epoch), then 2, 3, ... The simulated cluster
    derives its first resourceVersion from it, so no resourceVersion of an earlier run is valid in
    a later one (cluster.py, ``EPOCH_SPAN``). Written like ``save_identity`` (0600, atomic)."""
    data = _read_state(path)
    previous = data.get("epoch")
    epoch = (previous if isinstance(previous, int) and previous >= 0 else 0) + 1
    data["epoch"] = epoch
    _write_state(path, data)
    return epoch


def _read_state(path: str | os.PathLike) -> dict:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_state(path: str | os.PathLike, data: dict) -> None:
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    tmp = f"{path}.tmp-{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=2)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def _generate() -> TlsMaterial:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "volcano-sim-ca")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "volcano-sim-apiserver")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=30))
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName("localhost"),
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                    x509.IPAddress(ipaddress.ip_address("::1")),
                ]
            ),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    return TlsMaterial(
        ca_pem=ca_cert.public_bytes(pem),
        cert_pem=cert.public_bytes(pem) + ca_cert.public_bytes(pem),
        key_pem=key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()),
    )
