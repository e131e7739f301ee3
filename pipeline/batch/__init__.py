"""One batch's life, the same for corpus refresh, reprocess and re-alignment:

    discovery (manifest) -> runner (per-document stages, quarantine) -> publish.load ->
    publish.qa -> publish.promote (or discard) -> lifecycle.finish; review may roll back later.
"""
