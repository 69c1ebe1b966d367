# Everyday commands. `make test` is the README's test command and what CI runs.
PYTHON := .venv/bin/python
STACK ?= dev
# The kind stack keeps its state in a local file backend beside the repo, and encrypts
# its secrets with a passphrase (empty unless you set one): no Pulumi Cloud account needed.
export PULUMI_BACKEND_URL ?= file://$(CURDIR)/.pulumi-state
export PULUMI_CONFIG_PASSPHRASE ?=
# Where the e2e suite writes Pulumi's output and, after a failure, the logs of unhealthy pods.
E2E_ARTIFACTS ?= out/e2e

.PHONY: test check-stacks plan render crds kind-up kind-down grafana grafana-password e2e pinned notebook-images

.venv/bin/python: pyproject.toml
	python3 -m venv .venv
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet -e ".[test]"
	touch $@

test: .venv/bin/python
	$(PYTHON) -m mypy
	@# Two workers, one per core; a file's tests share one worker (and its full renders).
	@$(PYTHON) -m pytest -n 2 --dist loadfile; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: that is a failure" >&2; exit 1; fi; exit $$rc
	@$(MAKE) --no-print-directory check-stacks

# `python -m stacks check` of every shipped stack: the full render (helm, kustomize) from the
# upstream mirror (../shared/upstream beside the repo, or MLPLATFORM_MIRROR), then every rule.
check-stacks: .venv/bin/python
	@for stack in $$($(PYTHON) -c 'from stacks.config import stack_names; print(*stack_names())'); do \
		$(PYTHON) -m stacks check $$stack || exit 1; done

plan: .venv/bin/python
	$(PYTHON) -m stacks plan $(STACK)

render: .venv/bin/python
	$(PYTHON) -m stacks render $(STACK) --full --out out/$(STACK)

crds: .venv/bin/python
	$(PYTHON) scripts/fetch_crds.py

# The files generated from the pin table: images/notebook/Dockerfile, examples/requirements.txt.
pinned: .venv/bin/python
	$(PYTHON) scripts/generate_pinned.py

# The kind stack's notebook image (the CPU target), built here and loaded into the kind
# cluster under the name its notebook form offers (docs/images.md). GKE stacks get both
# targets from .github/workflows/notebook-image.yml.
KIND_CLUSTER ?= mlplatform
notebook-images: .venv/bin/python
	$(PYTHON) scripts/generate_pinned.py --check
	ref=$$($(PYTHON) scripts/notebook_image.py kind --ref cpu) && \
	docker build --target cpu -t "$$ref" images/notebook && \
	kind load docker-image --name $(KIND_CLUSTER) "$$ref"

kind-up: .venv/bin/python
	mkdir -p .pulumi-state
	pulumi stack select kind --create --secrets-provider passphrase
	@# Dex users: random passwords, bcrypt hashes as secret config (no default password).
	$(PYTHON) scripts/kind_users.py
	@# Grafana's admin password: a random one on first use (read it with `make grafana-password`).
	pulumi config get --stack kind mlplatform:grafanaAdminPassword >/dev/null 2>&1 || \
		pulumi config set --stack kind --secret mlplatform:grafanaAdminPassword "$$(openssl rand -base64 18)"
	pulumi up --stack kind --yes

grafana-password:
	@pulumi config get --stack $(STACK) mlplatform:grafanaAdminPassword

grafana: ## port-forward Grafana to http://localhost:3000 (user admin)
	kubectl --context kind-mlplatform -n monitoring port-forward svc/grafana 3000:80

kind-down:
	pulumi destroy --stack kind --yes

# End to end on a kind cluster of its own (docs/e2e.md): creates it with `pulumi up` of the
# kind stack through the Automation API (state and secrets in a temp dir), tests, destroys it.
e2e: .venv/bin/python
	E2E=1 E2E_ARTIFACTS=$(E2E_ARTIFACTS) $(PYTHON) -m pytest -m e2e tests/e2e -v -rs
