# Rosetta: the two commands a new machine needs (see README.md).
#   make demo   install what is missing, then run the sample corpus through corpus_refresh
#   make test   install what is missing, then run the whole test suite
#   make test-fast     the tests that need no Weaviate, Airflow or sample corpus (about two minutes)
#   make test-crash    kill a real `rosetta ingest` during every stage in turn, then resume (about 10 minutes;
#                      part of make test too)
#   make test-scale    a three-node Weaviate cluster and two Celery workers, each losing a member mid-batch (9-12 minutes)
#   make images        the stage images (podman here, docker elsewhere; docs/deploy.md)
#   make demo-docker   the sample corpus through all stages in containers, compared with local mode
.PHONY: install demo test test-fast test-crash test-scale images demo-docker

install:
	scripts/install.sh

demo: install
	.venv/bin/rosetta demo

test: install
	.venv/bin/pytest -q

test-fast:
	scripts/install.sh python
	.venv/bin/pytest -q -m "not integration"

test-crash: install
	.venv/bin/pytest -q tests/test_crash_recovery.py

test-scale: install
	.venv/bin/pytest -q -m scale tests/test_weaviate_cluster.py tests/test_celery_workers.py

# podman where it is installed (docs/decisions.md section 4), else docker. One pipeline version for
# the whole target (image tags and both modes' chunks), even if HEAD moves meanwhile.
PODMAN := $(shell command -v podman)
SOCKET := $(CURDIR)/.containers/podman.sock
ifndef ROSETTA_PIPELINE_VERSION
ROSETTA_PIPELINE_VERSION := git-$(shell git rev-parse --short=12 HEAD)
endif
export ROSETTA_PIPELINE_VERSION

images:
ifneq ($(PODMAN),)
	scripts/podman-setup.sh images
else
	docker/build.sh
endif

demo-docker: install images
ifneq ($(PODMAN),)
	scripts/podman-setup.sh start
	.venv/bin/python scripts/compare_modes.py --docker-url unix://$(SOCKET); \
	  status=$$?; scripts/podman-setup.sh stop; exit $$status
else
	.venv/bin/python scripts/compare_modes.py
endif
