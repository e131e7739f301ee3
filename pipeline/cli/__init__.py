"""The ``rosetta`` command line: ``main`` (documents, batches, search, stages) and ``anchors``
(alignment maps).
"""
