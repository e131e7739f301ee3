"""Where Rosetta keeps state: ``vector_store`` (Weaviate: the live and staging chunk
collections), ``document_registry`` (SQLite: every document's and batch's status) and
``tracking`` (MLflow: batch runs and the alignment maps' model registry).
"""
