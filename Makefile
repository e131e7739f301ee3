# Rosetta: the two commands a new machine needs (see README.md).
#   make demo   install what is missing, then run the sample corpus through corpus_refresh
#   make test   install what is missing, then run the whole test suite
.PHONY: install demo test

install:
	scripts/install.sh

demo: install
	.venv/bin/rosetta demo

test: install
	.venv/bin/pytest -q
