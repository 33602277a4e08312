#!/usr/bin/env bash
# Builds the configmap-sync-js component:
#   target/guests/js/configmap_sync_js.wasm (under the workspace root)
# Installs componentize-js first (the versions pinned in package-lock.json)
# when node_modules is missing or stale.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${REKON_OTHER_GUESTS_DIR:-$root/target/guests}/js"
mkdir -p "$out"

cd "$here"
if [ ! -x node_modules/.bin/componentize-js ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    # `npm ci` refuses a lock file that lists optional platform binaries it
    # cannot resolve, and the registry mirror our machines reach serves only
    # this platform's; `npm install --no-save` then installs the same locked
    # versions and integrity hashes without touching the lock file.
    npm ci --no-audit --no-fund --loglevel=silent ||
        npm install --no-save --no-audit --no-fund --loglevel=error
fi

# No `http` / `fetch-event`: a reconciler reaches the cluster only through
# the host. stdio stays so uncaught errors reach the host's log.
# componentize-js resolves the WIT path inside its own sandbox, which sees
# the current directory: run from the workspace root with relative paths.
cd "$root"
"$here/node_modules/.bin/componentize-js" \
    --wit wit --world-name operator \
    --disable http fetch-event \
    -o "$out/configmap_sync_js.wasm.tmp" \
    guests/configmap-sync-js/src/reconciler.js
mv "$out/configmap_sync_js.wasm.tmp" "$out/configmap_sync_js.wasm"
echo "built $out/configmap_sync_js.wasm ($(wc -c < "$out/configmap_sync_js.wasm") bytes)"
