"""Rosetta's Airflow side (Airflow's plugins folder puts this package on sys.path):

- ``flow``: the TaskFlow graph both ingestion DAGs share, built from pipeline.stages' table;
- ``containers``, ``docker_mode``, ``kubernetes_mode``: the operators of the docker and
  kubernetes execution modes;
- ``runner``: a DAG run in-process with ``dag.test()`` (``rosetta ingest``, the tests).

pipeline/ never imports this package or Airflow: the stages run the same without them.
"""
