# Tasks for people and CI alike. `make test` is what CI runs.
.PHONY: setup test lint fmt bench run

CARGO ?= cargo

# Everything a fresh machine lacks: the wasm target the guests are built for.
setup:
	@rustup target list --installed | grep -qx wasm32-wasip2 || rustup target add wasm32-wasip2

# Builds the guests once (tests/artifacts) and runs every test of the workspace.
test: setup
	$(CARGO) test --workspace

lint: setup
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

bench: setup
	$(CARGO) bench --bench dispatch

# rekon dev: the in-memory API server with the example CRD and App applied,
# and the example guests reconciling against it. Ctrl-C stops it.
GUESTS = target/guests/wasm32-wasip2/guest
run: setup
	$(CARGO) build -q -p rekon-test-artifacts -p rekon-host
	$(CARGO) run -q -p rekon-host -- dev $(GUESTS)/app.wasm $(GUESTS)/configmap_sync.wasm \
		-f guests/app/manifests/crd.yaml -f guests/app/manifests/example.yaml \
		--write-kubeconfig target/rekon-dev.kubeconfig
