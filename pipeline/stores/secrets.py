"""Local secrets: random keys generated once into the secrets folder (``<data_root>/secrets``
unless ``secrets_dir`` says otherwise), mode 0600 in a 0700 folder, never logged.

The embedded Weaviate's API key and its cluster password live here; the server and every
client (pipeline tasks, the CLI, the tests) read the same files, so a key is rotated by
deleting its file while nothing runs (docs/deploy.md, "Security").

One file here is the operator's, never generated: ``pdf-passwords``, the passwords the extract
stage tries on a password-protected PDF, one a line (docs/deploy.md, "Password-protected PDFs").
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from pipeline.config import Settings

WEAVIATE_API_KEY = "weaviate-api-key"
WEAVIATE_CLUSTER_PASSWORD = "weaviate-cluster-password"
PDF_PASSWORDS = "pdf-passwords"


def secrets_folder(settings: Settings) -> Path:
    return settings.secrets_dir or settings.data_root / "secrets"


def local_secret(settings: Settings, name: str) -> str:
    """The secret ``name``, generated on first use.

    Concurrent first uses (parallel tasks) agree: each writes a complete private temp file
    and links it into place; the loser reads the winner's. Nothing half-written is ever read.
    """
    folder = secrets_folder(settings)
    path = folder / name
    if path.exists():
        return _read(path)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(folder, 0o700)
    temp = folder / f".{name}.{os.getpid()}.{secrets.token_hex(4)}"
    descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="ascii") as handle:
        handle.write(secrets.token_urlsafe(32))
    try:
        os.link(temp, path)
    except FileExistsError:
        pass
    finally:
        temp.unlink()
    return _read(path)


def pdf_passwords_file(settings: Settings) -> Path:
    return secrets_folder(settings) / PDF_PASSWORDS


def pdf_passwords(settings: Settings) -> list[str]:
    """The passwords to try on a password-protected PDF, in the file's order (blank lines
    skipped; spaces inside and around a password are part of it); none without the file."""
    path = pdf_passwords_file(settings)
    if not path.exists():
        return []
    _check_private(path)
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line]


def _check_private(path: Path) -> None:
    if path.stat().st_mode & 0o077:
        raise PermissionError(f"{path}: a secret must be readable by its owner only (chmod 600 {path})")


def _read(path: Path) -> str:
    _check_private(path)
    value = path.read_text(encoding="ascii").strip()
    if not value:
        raise ValueError(f"{path} is empty: delete it and a new secret is generated")
    return value
