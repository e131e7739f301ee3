"""Local secrets: random keys generated once into the secrets folder (``<data_root>/secrets``
unless ``secrets_dir`` says otherwise), mode 0600 in a 0700 folder, never logged.

The embedded Weaviate's API key and its cluster password live here; the server and every
client (pipeline tasks, the CLI, the tests) read the same files, so a key is rotated by
deleting its file while nothing runs (docs/deploy.md, "Security").
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from pipeline.config import Settings

WEAVIATE_API_KEY = "weaviate-api-key"
WEAVIATE_CLUSTER_PASSWORD = "weaviate-cluster-password"


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


def _read(path: Path) -> str:
    if path.stat().st_mode & 0o077:
        raise PermissionError(f"{path}: a secret must be readable by its owner only (chmod 600 {path})")
    value = path.read_text(encoding="ascii").strip()
    if not value:
        raise ValueError(f"{path} is empty: delete it and a new secret is generated")
    return value
