# The Airflow image of docker/compose.yaml (API server, scheduler, DAG processor, triggerer,
# Celery workers): Airflow 3 with Rosetta, its DAGs and the execution-mode operators. The
# workers run the batch-level steps (load, QA gate, promotion) themselves and start every
# per-document stage as a sibling container through the Docker socket.
ARG AIRFLOW_IMAGE=docker.io/apache/airflow:3.3.2-python3.11
FROM ${AIRFLOW_IMAGE}

# The official image already has the Celery, Postgres and Redis providers; add Rosetta's pins.
COPY requirements.txt /tmp/requirements.txt
RUN grep -v '^#' /tmp/requirements.txt > /tmp/pins.txt \
 && pip install --no-cache-dir -r /tmp/pins.txt \
 && rm /tmp/requirements.txt /tmp/pins.txt

COPY --chown=airflow:0 pyproject.toml README.md /opt/rosetta/
COPY --chown=airflow:0 pipeline /opt/rosetta/pipeline
COPY --chown=airflow:0 dags /opt/rosetta/dags
COPY --chown=airflow:0 plugins /opt/rosetta/plugins
COPY --chown=airflow:0 anchors /opt/rosetta/anchors
RUN pip install --no-cache-dir --no-deps /opt/rosetta

ARG PIPELINE_VERSION
ENV ROSETTA_PIPELINE_VERSION=${PIPELINE_VERSION} \
    ROSETTA_HOME=/opt/rosetta
