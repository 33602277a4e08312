# Tasks for people and CI alike. `make test` is what CI runs.
.PHONY: setup test lint fmt bench dev

CARGO ?= cargo

# Everything a fresh machine lacks: the wasm target the guests are built for.
setup:
	@rustup target list --installed | grep -qx wasm32-wasip2 || rustup target add wasm32-wasip2

# Builds the guests once (tests/artifacts) and runs every test of the workspace.
test: setup
	$(CARGO) test --workspace --all-targets

lint: setup
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

bench: setup
	$(CARGO) bench --bench dispatch
