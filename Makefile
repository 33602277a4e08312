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

# Runs the `app` guest on the example App, offline, printing every host call.
run: setup
	$(CARGO) build -q -p rekon-test-artifacts -p rekon-host
	$(CARGO) run -q -p rekon-host -- reconcile target/guests/wasm32-wasip2/guest/app.wasm --object guests/app/manifests/example.yaml
