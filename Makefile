# Everyday commands. `make test` is the README's test command and what CI runs.
VENV := .venv
PYTHON := $(VENV)/bin/python
# A stamp of our own: touching .venv/bin/python would follow its symlink to the system
# interpreter (Permission denied for anyone but root).
INSTALLED := $(VENV)/.installed
# PyPI's Linux torch is the multi-GB CUDA build; the tests run on the CPU build from here.
TORCH_INDEX := https://download.pytorch.org/whl/cpu
PIP_VERSION := 26.3
PIP_TOOLS_VERSION := 7.6.2
STACK ?= dev
# The kind stack keeps its state in a local file backend (.pulumi-state/kind), and encrypts
# its secrets with a passphrase (empty unless you set one): no Pulumi Cloud account needed.
export PULUMI_CONFIG_PASSPHRASE ?=
# Where the e2e suite writes Pulumi's output and, after a failure, the logs of unhealthy pods.
E2E_ARTIFACTS ?= out/e2e

.PHONY: test envtest wheel-test examples snapshots docs mirror check-stacks fork-trial mutations plan render crds lock kind-up kind-down grafana e2e pinned notebook-images

# The virtualenv from the lock files: CPU torch from its own index first, then every package
# at its locked version, then this repo (editable, no dependencies of its own to resolve).
# pip compiles the bytecode as it installs (about 30 s): where PYTHONDONTWRITEBYTECODE is
# set (CI images often do) nothing else would, and every test process and `python -m
# mlplatform` run would compile pulumi-gcp and the rest again (5 s each).
$(INSTALLED): requirements-test.txt pyproject.toml
	@echo "make: installing the test environment into $(VENV) (Python packages from requirements-test.txt; ~2 min the first time)"
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install --upgrade pip==$(PIP_VERSION)
	@# torch alone (its dependencies are in the lock and come from PyPI with the rest)
	$(PYTHON) -m pip install --no-deps --index-url $(TORCH_INDEX) "$$(grep -o '^torch==[^ ]*' requirements-test.txt)"
	$(PYTHON) -m pip install -r requirements-test.txt
	$(PYTHON) -m pip install --no-deps -e .
	@# helm and kubectl for the full render (pinned, sha256-checked, cached per user), fetched
	@# now rather than by the first render; without them plan and cost still work.
	$(PYTHON) -m tooling.tools || echo "make: helm and kubectl not fetched (above); render and check need them"
	touch $@

# Re-resolve the lock files from pyproject.toml (after changing a dependency there). Every pin
# that still fits its range is kept; `make lock UPGRADE="pulumi pulumi-policy"` moves the named
# packages to their newest releases inside their ranges (a Pulumi SDK bump: docs/development.md).
UPGRADE ?=
lock: $(INSTALLED)
	$(PYTHON) -m pip install --quiet pip-tools==$(PIP_TOOLS_VERSION)
	@# The test lock first; the program's lock then takes the same versions (-c). --allow-unsafe:
	@# setuptools too, which pulumi-policy requires (pip-tools leaves it out by default).
	CUSTOM_COMPILE_COMMAND="make lock" $(PYTHON) -m piptools compile --quiet --strip-extras --no-emit-index-url \
		--no-emit-find-links --annotation-style=line --allow-unsafe --extra test $(foreach p,$(UPGRADE),--upgrade-package $(p)) \
		-o requirements-test.txt pyproject.toml
	CUSTOM_COMPILE_COMMAND="make lock" $(PYTHON) -m piptools compile --quiet --strip-extras --no-emit-index-url \
		--no-emit-find-links --annotation-style=line --allow-unsafe -c requirements-test.txt -o requirements.txt pyproject.toml

test: $(INSTALLED)
	$(PYTHON) -m ruff check .
	$(PYTHON) -m mypy
	@# Our own modules' bytecode, once: where PYTHONDONTWRITEBYTECODE is set (CI images often do)
	@# nothing else writes it, and every test worker and every `python -m mlplatform` a test starts
	@# would compile them again (about 10 s of the unit suite's CPU on two cores).
	@$(PYTHON) -m compileall -q -j 2 components facts infra mlplatform plumbing policy runtimes stackmodel tooling tests program.py
	@# Two workers, one per core; a file's tests share one worker (and its full renders).
	@# Files go out in collection order, not largest-first by test count: tests/test_check.py
	@# (the full renders, ~18 s) starts at once on one worker while the other takes the rest.
	@$(PYTHON) -m pytest -n 2 --dist loadfile --no-loadscope-reorder; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: that is a failure" >&2; exit 1; fi; exit $$rc
	@$(MAKE) --no-print-directory check-stacks
	@$(MAKE) --no-print-directory wheel-test
	@$(MAKE) --no-print-directory envtest

# The package as a user installs it (tests/package/): the wheel built from the working tree,
# installed into a clean virtualenv with only the dependencies it declares (linked from this one),
# every module imported, the policy pack's too, `mlplatform --help` run. A
# target of its own (pip and a virtualenv: seconds of processes), so the unit suite keeps its time.
wheel-test: $(INSTALLED)
	@$(PYTHON) -m pytest tests/package; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: that is a failure" >&2; exit 1; fi; exit $$rc

# The tests against a real control plane (tests/envtest/, docs/development.md): etcd, kube-apiserver
# and kube-controller-manager v1.36 from $$KUBEBUILDER_ASSETS, else ../shared/envtest unpacked into
# ~/.cache/mlplatform/envtest; every stack's full render applied, the access matrix asked of the RBAC
# authorizer, the GPU-accounting admission policy enforced on TrainJobs the Kubeflow SDK builds. A
# target of its own (one process: one control plane), so the unit suite keeps its time.
envtest: $(INSTALLED)
	@$(PYTHON) -m pytest tests/envtest; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: that is a failure" >&2; exit 1; fi; exit $$rc

# The data scientists' examples in a virtualenv of their own, made from examples/requirements.txt
# alone (the unit virtualenv cannot hold Ray: pulumi pins protobuf 5): every example's `--local`
# run, the two-process PyTorch and JAX runs, and the team Ray cluster's token authentication against a real
# Ray head (with the PodDefault the platform renders, from .venv) and nginx (tests/examples/).
# A missing framework fails (MLPLATFORM_EXAMPLES=all). CI runs it after `make test` (.ci/run).
EXAMPLES_VENV := .venv-examples
EXAMPLES_PYTHON := $(EXAMPLES_VENV)/bin/python
EXAMPLES_INSTALLED := $(EXAMPLES_VENV)/.installed

# torch alone first, pinned, from the CPU index (as for .venv: never PyPI's CUDA build), then the
# rest, which finds its torch installed; pytest at the unit lock's version. torch without its
# bytecode (9 s instead of over a minute here; `make examples` lets Python write what it imports);
# the rest with it: Ray's dashboard gives each of its modules 30 s to start, which compiling them
# on first import on a busy machine overran.
$(EXAMPLES_INSTALLED): examples/requirements.txt requirements-test.txt
	@echo "make: installing the examples' environment into $(EXAMPLES_VENV) (examples/requirements.txt; ~2 min the first time)"
	python3 -m venv $(EXAMPLES_VENV)
	$(EXAMPLES_PYTHON) -m pip install --quiet --upgrade pip==$(PIP_VERSION)
	$(EXAMPLES_PYTHON) -m pip install --quiet --no-compile --no-deps --index-url $(TORCH_INDEX) "$$(grep -o '^torch==[^ ]*' examples/requirements.txt)"
	$(EXAMPLES_PYTHON) -m pip install --quiet -r examples/requirements.txt "$$(grep -o '^pytest==[^ ]*' requirements-test.txt)"
	touch $@

examples: $(EXAMPLES_INSTALLED) $(INSTALLED)
	@env -u PYTHONDONTWRITEBYTECODE MLPLATFORM_EXAMPLES=all MLPLATFORM_PYTHON=$(abspath $(PYTHON)) \
		$(EXAMPLES_PYTHON) -m pytest --noconftest -p no:cacheprovider -v -s tests/examples; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no example test: that is a failure" >&2; exit 1; fi; exit $$rc

# The golden snapshots (tests/snapshots/: plans, full renders, object counts) rewritten from
# today's code; the tests only compare. Review `git diff tests/snapshots/` before committing.
snapshots: $(INSTALLED)
	$(PYTHON) -m tests.support.snapshots

# The generated parts of the docs from the code: docs/reference.md (the schema), the version table
# of docs/versions.md (the pin table), the diagram of docs/architecture.md (the prod fixture's plan).
docs: $(INSTALLED)
	$(PYTHON) scripts/update_docs.py

# The upstream mirror the full render and the tests read, built from the pin table alone into
# .mlplatform/upstream (git-ignored): every chart by helm pull, every Kubeflow folder and remote
# kustomize base by git at its pinned ref, checked and summed (tooling/mirror.py). A mirror of
# today's pins that matches its SHA256SUMS is left alone. MIRROR_SOURCES=FILE fetches from
# elsewhere: a YAML mapping of pinned location -> location (a company mirror; loopback in tests).
# Pins only of components no stack of stacks/ enables are optional: left out, named, where not served.
MIRROR_SOURCES ?=
mirror: $(INSTALLED)
	$(PYTHON) -m tooling.mirror $(if $(MIRROR_SOURCES),--sources $(MIRROR_SOURCES))

# `python -m mlplatform check` of every stack in stacks/ (a fork's own, whatever they are): the full
# render (helm, kustomize) from the upstream mirror (the clone's own from `make mirror`, else
# MLPLATFORM_MIRROR, else ../shared/upstream beside the repo), then every rule.
check-stacks: $(INSTALLED)
	@for stack in $$($(PYTHON) -c 'from stackmodel.config import stack_names; print(*stack_names())'); do \
		$(PYTHON) -m mlplatform check $$stack || exit 1; done

# `make mirror` then `make test` (CI=true) in a fresh clone of this checkout (HEAD) whose stacks/ holds
# only a new stack file of another company (tests/data/fork/), with no mirror beside it: what a fork
# that replaces acme's example stacks gets in its own CI (scripts/fork_trial.py). Without network:
# `make fork-trial FORK_TRIAL=--loopback` (the upstreams served on loopback from the mirror found here).
FORK_TRIAL ?=
fork-trial: $(INSTALLED)
	$(PYTHON) scripts/fork_trial.py $(FORK_TRIAL)

# Every mutation of the shipped stacks (drops, empties, duplicated entries, wrong types,
# out-of-range numbers) through `python -m mlplatform plan`, accepted ones planned: exit 0 or 2,
# no traceback, nothing the schema documents as invalid accepted (benchmarks/mutations.py).
mutations: $(INSTALLED)
	$(PYTHON) -m benchmarks.mutations --jobs 2

plan: $(INSTALLED)
	$(PYTHON) -m mlplatform plan $(STACK)

render: $(INSTALLED)
	$(PYTHON) -m mlplatform render $(STACK) --full --out out/$(STACK)

crds: $(INSTALLED)
	$(PYTHON) scripts/fetch_crds.py

# The files generated from the pin table: images/notebook/Dockerfile, examples/requirements.txt.
pinned: $(INSTALLED)
	$(PYTHON) scripts/generate_pinned.py

# The kind stack's notebook image (the CPU target), built here and loaded into the kind
# cluster under the name its notebook form offers (docs/images.md). GKE stacks get both
# targets from .github/workflows/notebook-image.yml.
KIND_CLUSTER ?= mlplatform
notebook-images: $(INSTALLED)
	$(PYTHON) scripts/generate_pinned.py --check
	ref=$$($(PYTHON) scripts/notebook_image.py kind --ref cpu) && \
	docker build --target cpu -t "$$ref" images/notebook && \
	kind load docker-image --name $(KIND_CLUSTER) "$$ref"

kind-up:
	@# Every outside tool first, in one message, before the virtualenv or anything slow.
	@python3 -m tooling.prerequisites kind-up
	@$(MAKE) --no-print-directory $(INSTALLED)
	@# State, passphrase salt and secrets in .pulumi-state/kind (untracked); Dex passwords
	@# in .pulumi-state/kind-passwords.txt; Pulumi's output streams here.
	$(PYTHON) -m tooling.kind_stack up

grafana: ## the Kubeflow gateway on http://localhost:8080: Grafana at /grafana/, signed in as your Dex user
	kubectl --context kind-mlplatform -n istio-system port-forward svc/istio-ingressgateway 8080:80

# Team namespaces, Profiles and the monitoring namespace are protected (docs/teams.md); the
# kind stack is thrown away whole, so `down` lifts their protection first.
kind-down: $(INSTALLED)
	$(PYTHON) -m tooling.kind_stack down

# End to end on a kind cluster of its own (docs/e2e.md): creates it with `pulumi up` of the
# kind stack through the Automation API (state and secrets in a temp dir), tests, destroys it.
e2e:
	@# Every outside tool first, in one message, before the virtualenv or anything slow.
	@python3 -m tooling.prerequisites e2e
	@$(MAKE) --no-print-directory $(INSTALLED)
	E2E=1 E2E_ARTIFACTS=$(E2E_ARTIFACTS) $(PYTHON) -m pytest -m e2e tests/e2e -v -rs
