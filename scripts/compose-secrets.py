#!/usr/bin/env python3
"""Write a fresh set of the secrets docker/compose.yaml requires into an env file (mode 0600).

    scripts/compose-secrets.py docker/.env     # compose reads docker/.env next to compose.yaml

An existing file is never overwritten (rotating a secret is a per-secret step: docs/deploy.md,
"Security"). Prints the names it wrote, never the values.
"""

from __future__ import annotations

import base64
import os
import re
import secrets
import sys
from pathlib import Path

COMPOSE = Path(__file__).resolve().parents[1] / "docker" / "compose.yaml"


def required_secrets() -> list[str]:
    """The variables compose.yaml requires (``${NAME:?...}``), except the image tag."""
    names = re.findall(r"(?<!\$)\$\{(\w+):\?", COMPOSE.read_text())
    return sorted(set(names) - {"ROSETTA_IMAGE_TAG"})


def value_for(name: str) -> str:
    if name == "AIRFLOW_FERNET_KEY":  # Fernet wants 32 url-safe base64 bytes
        return base64.urlsafe_b64encode(os.urandom(32)).decode()
    return secrets.token_urlsafe(32)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    target = Path(argv[0])
    if target.exists():
        print(f"{target} exists: not overwritten", file=sys.stderr)
        return 1
    names = required_secrets()
    descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.writelines(f"{name}={value_for(name)}\n" for name in names)
    print(f"wrote {len(names)} secrets to {target} (mode 0600): {', '.join(names)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
