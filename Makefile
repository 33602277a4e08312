# Tasks for people and CI alike. `make test` is what CI runs.
.PHONY: setup guests-other test lint fmt bench run deploy-modules image image-docker

CARGO ?= cargo

# Everything a fresh machine lacks: the toolchain rust-toolchain.toml pins
# (with its components and the wasm target the guests are built for; rustup
# installs it here even where it is told not to install on first use) and
# that target.
setup:
	@rustc --version >/dev/null 2>&1 || rustup toolchain install
	@rustup target list --installed | grep -qx wasm32-wasip2 || rustup target add wasm32-wasip2

# The guests in other languages. Their tools come from npm and PyPI
# (componentize-js, pinned in package-lock.json, installed by npm;
# componentize-py, pinned in requirements.txt, in a virtualenv under
# target/tools/py): each build script installs its tool when missing.
# Rebuilt only when their sources, the WIT or the pinned versions change.
JS_GUEST = target/guests/js/configmap_sync_js.wasm
PY_GUEST = target/guests/py/configmap_sync_py.wasm
guests-other: $(JS_GUEST) $(PY_GUEST)

$(JS_GUEST): guests/configmap-sync-js/build.sh guests/configmap-sync-js/package.json \
		guests/configmap-sync-js/package-lock.json \
		$(wildcard guests/configmap-sync-js/src/*.js) $(wildcard wit/*.wit)
	bash guests/configmap-sync-js/build.sh

$(PY_GUEST): guests/configmap-sync-py/build.sh guests/configmap-sync-py/requirements.txt \
		$(wildcard guests/configmap-sync-py/*.py) $(wildcard wit/*.wit)
	bash guests/configmap-sync-py/build.sh

# Builds the guests once (tests/artifacts builds the Rust ones, guests-other
# the others) and runs every test of the workspace.
test: setup guests-other
	$(CARGO) test --workspace

lint: setup
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

fmt:
	$(CARGO) fmt --all

bench: setup guests-other
	$(CARGO) bench --bench dispatch
	$(CARGO) bench --bench languages

# rekon dev: the in-memory API server with the example CRD and App applied,
# and the example guests reconciling against it. Ctrl-C stops it.
GUESTS = target/guests/wasm32-wasip2/guest
run: setup
	$(CARGO) build -q -p rekon-test-artifacts -p rekon
	$(CARGO) run -q -p rekon -- dev $(GUESTS)/app.wasm $(GUESTS)/configmap_sync.wasm \
		-f guests/app/manifests/example.yaml \
		--write-kubeconfig target/rekon-dev.kubeconfig

# The example module for `kubectl apply -k deploy/`: packed as the
# ConfigMaps the host watches (deploy/modules/app.yaml).
REKON = target/debug/rekon
deploy-modules: setup
	$(CARGO) build -q -p rekon-test-artifacts -p rekon --bin rekon
	$(REKON) pack $(GUESTS)/app.wasm --name app > deploy/modules/app.yaml

# The container image deploy/ runs (ghcr.io/rekon-dev/rekon:<version>), built
# without a container daemon (umoci and skopeo, Debian packages) into
# target/image/rekon.tar: `docker load -i`, `ctr -n k8s.io images import`,
# or `skopeo copy docker-archive:target/image/rekon.tar docker://REGISTRY/...`.
image:
	$(CARGO) build --release --locked -p rekon --bin rekon
	tools/image.sh target/image/rekon.tar target/release/rekon

# The same image with a container daemon, from the Dockerfile.
IMAGE ?= ghcr.io/rekon-dev/rekon:$(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
image-docker:
	docker build -t $(IMAGE) .
