"""Sentence embedders behind one small interface (``embedders``), chosen by name in config."""
