#!/usr/bin/env python3
"""tools/builtin-fields.py

Regenerates store/src/builtin/fields.json: the fields each built-in kind
declares, as a real kube-apiserver publishes them in its OpenAPI v3
documents. The embedded server prunes what an object of a built-in kind
does not declare, and reports it as `fieldValidation` says, from this file
(store/src/builtin/fields.rs), as the real server's decoding into its Go
types does.

Usage, against a real API server (`rekon dev --kube-assets DIR
--api-only` or any kube-apiserver whose version the file should follow):

    KUBECONFIG=... tools/builtin-fields.py            # fetches with kubectl
    tools/builtin-fields.py DIR                       # or reads DIR/*.json

The file holds, for every object type of those documents, its fields and
what each holds:
    0            a value whose insides are not checked (scalars,
                 quantities, int-or-string, RawExtension, FieldsV1)
    "T"          an object of the type T
    [node]       a list of node (a strategic merge patch replaces it)
    {"l": node, "k": "key"}
                 a list a strategic merge patch merges, item by item by
                 its merge key ("" for a list of scalars, merged as a set)
    {"*": node}  a map of node
and `kinds`, each built-in kind (`group/version/Kind`, `v1/Kind` for the
core group) to its type.
"""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "store", "src", "builtin", "fields.json")
PREFIXES = ("io.k8s.api.", "io.k8s.apimachinery.pkg.apis.", "io.k8s.apimachinery.pkg.")
# CustomResourceDefinitions are decoded by their own code (kinds/crd.rs).
SKIP_GROUPS = ("apiextensions.k8s.io",)


def short(name):
    for p in PREFIXES:
        if name.startswith(p):
            return name[len(p):]
    return name


def documents():
    if len(sys.argv) > 1:
        folder = sys.argv[1]
        for f in sorted(os.listdir(folder)):
            if f.endswith(".json"):
                with open(os.path.join(folder, f)) as fh:
                    yield json.load(fh)
        return
    kubectl = os.environ.get("KUBECTL", "kubectl")
    index = json.loads(subprocess.check_output([kubectl, "get", "--raw", "/openapi/v3"]))
    for path in sorted(index["paths"]):
        parts = path.split("/")
        if path == "api/v1" or (len(parts) == 3 and parts[0] == "apis"):
            if len(parts) == 3 and parts[1] in SKIP_GROUPS:
                continue
            yield json.loads(subprocess.check_output([kubectl, "get", "--raw", "/openapi/v3/" + path]))


def main():
    schemas = {}
    for doc in documents():
        schemas.update(doc.get("components", {}).get("schemas", {}))
    types = {}

    def ref_of(schema):
        if "$ref" in schema:
            return schema["$ref"].rsplit("/", 1)[1]
        for sub in schema.get("allOf", []):
            if "$ref" in sub:
                return sub["$ref"].rsplit("/", 1)[1]
        return None

    def node(schema, where):
        ref = ref_of(schema)
        if ref is not None:
            return type_node(ref)
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return 0
        if schema.get("type") == "array" and "items" in schema:
            item = node(schema["items"], where + "[]")
            if "merge" in schema.get("x-kubernetes-patch-strategy", "").split(","):
                return {"l": item, "k": schema.get("x-kubernetes-patch-merge-key", "")}
            return [item]
        if "properties" in schema:
            name = where
            types[name] = None
            types[name] = {k: node(v, where + "." + k) for k, v in schema["properties"].items()}
            return name
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            inner = node(extra, where + "{}")
            return {"*": inner}
        return 0

    def type_node(name):
        key = short(name)
        if key in types:
            return key
        schema = schemas.get(name, {})
        if "properties" not in schema:
            # An object type declaring no fields (RawExtension, FieldsV1)
            # or a scalar (Quantity, Time, IntOrString): not looked into.
            inner = node(schema, key) if schema.get("type") == "array" or isinstance(schema.get("additionalProperties"), dict) else 0
            return inner
        types[key] = None  # recursion guard
        types[key] = {k: node(v, key + "." + k) for k, v in schema["properties"].items()}
        return key

    kinds = {}
    for name, schema in sorted(schemas.items()):
        for gvk in schema.get("x-kubernetes-group-version-kind", []):
            group, version, kind = gvk["group"], gvk["version"], gvk["kind"]
            if group in SKIP_GROUPS or kind.endswith("List") or kind in ("Status", "WatchEvent", "DeleteOptions", "APIResourceList", "APIGroup", "APIGroupList", "APIVersions"):
                continue
            if "properties" not in schema or "metadata" not in schema["properties"]:
                continue
            gv = f"{group}/{version}" if group else version
            kinds[f"{gv}/{kind}"] = type_node(name)

    out = {"kinds": dict(sorted(kinds.items())), "types": dict(sorted(types.items()))}
    with open(OUT, "w") as fh:
        json.dump(out, fh, separators=(",", ":"), sort_keys=False)
        fh.write("\n")
    print(f"{OUT}: {len(kinds)} kinds, {len(types)} types, {os.path.getsize(OUT)} bytes")


if __name__ == "__main__":
    main()
