#!/usr/bin/env bash
# Builds the configmap-sync-py component:
#   target/guests/py/configmap_sync_py.wasm (under the workspace root)
# Installs componentize-py first (the version pinned in requirements.txt)
# into a virtualenv at target/tools/py when it is missing or stale.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${REKON_OTHER_GUESTS_DIR:-$root/target/guests}/py"
venv="${REKON_PY_VENV:-$root/target/tools/py}"
mkdir -p "$out"

stamp="$venv/.requirements.txt"
if [ ! -x "$venv/bin/componentize-py" ] || ! cmp -s "$here/requirements.txt" "$stamp"; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt"
    cp "$here/requirements.txt" "$stamp"
fi

# Bindings for the world are generated into the component at build time;
# `componentize-py -d wit -w operator bindings DIR` writes them out for
# an editor (see README.md).
"$venv/bin/componentize-py" -d "$root/wit" -w operator \
    componentize -p "$here" app \
    -o "$out/configmap_sync_py.wasm.tmp"
mv "$out/configmap_sync_py.wasm.tmp" "$out/configmap_sync_py.wasm"
echo "built $out/configmap_sync_py.wasm ($(wc -c < "$out/configmap_sync_py.wasm") bytes)"
