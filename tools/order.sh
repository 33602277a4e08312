#!/usr/bin/env bash
# tools/order.sh
#
# Regenerates cli/rekon.order.gz, the order in which the linker lays out the
# `rekon` executable's functions (cli/build.rs hands it to lld): every
# function `rekon run` calls while it starts, reconciles and idles comes
# first, next to each other, so the code a running host touches fills few
# pages and the kernel's fault-around (64 KiB around each page touched) maps
# little of what never runs.
#
# How: an instrumented build (`-Cprofile-generate`, in target/order) runs the
# `app` module against `rekon dev --api-only` (a real kube-apiserver when
# KUBEBUILDER_ASSETS is set, the embedded one otherwise) while Apps are
# created, edited, left idle and deleted; the functions its profile counts are
# the order, most called first. Symbol names do not depend on the
# instrumentation (cargo leaves RUSTFLAGS out of -C metadata) but for the
# `.llvm.<hash>` suffix ThinLTO gives some local functions, which changes
# with their code unit's contents (matched away below). Run it again after a
# toolchain or dependency upgrade, or after large changes to the host:
# functions the file does not name are laid out after it, as before.
#
# Needs: kubectl, the llvm-tools rustup component (installed when missing).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
apps=${ORDER_APPS:-100}

rustup component list --installed | grep -q '^llvm-tools' || rustup component add llvm-tools
sysroot=$(rustc --print sysroot)
profdata=$(find "$sysroot" -name llvm-profdata -type f | head -1)
[[ -x $profdata ]] || { echo "$0: llvm-profdata not found under $sysroot" >&2; exit 1; }
command -v kubectl >/dev/null || { echo "$0: kubectl is missing" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/rekon-order.XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

echo "== instrumented build (target/order)"
# ORDER_BUILT=1: the instrumented build there is current, use it as it is.
if [[ -z ${ORDER_BUILT:-} ]]; then
  RUSTFLAGS="-Cprofile-generate=$root/target/order/profiles" \
    cargo build --release -p rekon --bin rekon --target-dir target/order
fi
cargo build --release -p rekon --bin rekon
make -s setup >/dev/null
cargo build -p rekon-test-artifacts -q
app=target/guests/wasm32-wasip2/guest/app.wasm
rekon=target/order/release/rekon

echo "== an API server"
target/release/rekon dev --api-only --write-kubeconfig "$work/kubeconfig" \
  -f guests/app/manifests/crd.yaml >"$work/dev.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 600); do [[ -s $work/kubeconfig ]] && break; sleep 0.2; done
export KUBECONFIG=$work/kubeconfig
until kubectl get crd apps.demo.rekon.dev >/dev/null 2>&1; do sleep 0.5; done

echo "== rekon run, instrumented: $apps Apps created, edited, idle, deleted"
# Compiled once first, as a restarted host finds its cache; then the run.
REKON_CACHE_DIR=$work/cache "$rekon" check --no-baseline "$app" >/dev/null 2>&1
rm -rf "$work/profiles"
LLVM_PROFILE_FILE="$work/profiles/run-%p.profraw" REKON_CACHE_DIR=$work/cache RUST_LOG=warn \
  "$rekon" run "$app" --metrics-addr 127.0.0.1:0 >"$work/run.log" 2>&1 &
run=$!
pids+=($run)
sleep 3
kubectl create namespace order >/dev/null
for i in $(seq 1 "$apps"); do
  printf 'apiVersion: demo.rekon.dev/v1\nkind: App\nmetadata:\n  name: app-%s\n  namespace: order\nspec:\n  image: nginx:1.27\n  replicas: 1\n  port: 8080\n---\n' "$i"
done | kubectl apply -f - >/dev/null
sleep 10
for i in $(seq 1 "$apps"); do
  kubectl patch apps.v1.demo.rekon.dev "app-$i" -n order --type merge -p '{"spec":{"replicas":2}}' >/dev/null
done
sleep 20
kubectl delete apps.v1.demo.rekon.dev --all -n order --wait=true --timeout=120s >/dev/null
sleep 5
kill -TERM "$run"
wait "$run" || true

echo "== the order"
"$profdata" merge -o "$work/run.profdata" "$work"/profiles/run-*.profraw
# Functions the run called (a block counted; the most counted block gives
# the order), by their symbol names (a local function's profile name
# carries its codegen unit before a `;`), kept when the release build has
# them (the others were inlined there).
# Most called first: what runs for every object and every request lies
# together at the front, and what ran only to start (given back once the host
# runs, see `release_code_pages`) at the back.
"$profdata" show --all-functions --counts "$work/run.profdata" |
  awk '/^  [^ ].*:$/ { name = substr($0, 3, length($0) - 3) }
       /Block counts: / { gsub(/[^0-9,]/, "", $0); n = split($0, c, ",");
                          top = 0; for (i = 1; i <= n; i++) if (c[i] + 0 > top) top = c[i] + 0;
                          if (top > 0) print top, name }' |
  sed -e 's/^\([0-9]*\) .*[;:]\(_[RZ]\)/\1 \2/' |
  sort -k1,1nr -k2,2 | awk '!seen[$2]++ { print $2 }' >"$work/called"
# A local function promoted by ThinLTO carries a `.llvm.<hash>` suffix that
# differs from build to build: names are matched without it, and the order
# names the release build's symbols.
nm --defined-only target/release/rekon |
  awk '{ base = $3; sub(/\.llvm\.[0-9]+$/, "", base); print base, $3 }' >"$work/symbols"
sed -e 's/\.llvm\.[0-9]*$//' "$work/called" |
  awk 'NR == FNR { full[$1] = full[$1] " " $2; next }
       ($1 in full) { n = split(full[$1], f, " "); for (i = 1; i <= n; i++) if (!seen[f[i]]++) print f[i] }' \
    "$work/symbols" - >"$work/order"
gzip -9 -n -c "$work/order" >cli/rekon.order.gz
echo "cli/rekon.order.gz: $(wc -l <"$work/order") functions of $(wc -l <"$work/called") called"
