"""The hostname a task instance records ([core] hostname_callable): the Celery worker's node
name when several workers share one machine (scripts/airflow-celery.sh gives each its own in
ROSETTA_CELERY_HOSTNAME), else the machine's fully qualified name, Airflow's default."""

from __future__ import annotations

import os
import socket


def task_hostname() -> str:
    return os.environ.get("ROSETTA_CELERY_HOSTNAME") or socket.getfqdn()
