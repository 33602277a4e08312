#!/usr/bin/env python3
"""tools/builtin-fields.py

Regenerates store/src/apis/fields.json: the fields each built-in kind
declares, as a real kube-apiserver publishes them in its OpenAPI v3
documents. The embedded server prunes what an object of a built-in kind
does not declare, and reports it as `fieldValidation` says, from this file
(store/src/apis/fields.rs), as the real server's decoding into its Go
types does.

Usage, against a real API server (`rekon dev --kube-assets DIR
--api-only` or any kube-apiserver whose version the file should follow):

    KUBECONFIG=... tools/builtin-fields.py            # fetches with kubectl
    tools/builtin-fields.py DIR                       # or reads DIR/*.json

The file holds, for every object type of those documents, its fields and
what each holds:
    0            a value whose insides are not checked (scalars,
                 quantities, int-or-string, RawExtension, FieldsV1)
    1            a metav1.Time (RFC 3339, read to the second, served in UTC)
    2            a metav1.MicroTime (six fractional digits, served in UTC)
    "T"          an object of the type T
    [node]       a list of node (a strategic merge patch replaces it)
    {"l": node, "k": "key"}
                 a list a strategic merge patch merges, item by item by
                 its merge key ("" for a list of scalars, merged as a set)
    {"*": node}  a map of node
and `kinds`, each built-in kind (`group/version/Kind`, `v1/Kind` for the
core group) to its type.
"""

import os
import sys

from openapi_schemas import ROOT, kinds, ref_of, schemas, short, write

OUT = os.path.join(ROOT, "store", "src", "apis", "fields.json")


def main():
    all_schemas = schemas(sys.argv[1] if len(sys.argv) > 1 else None)
    types = {}

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
        if name == "io.k8s.apimachinery.pkg.apis.meta.v1.Time":
            return 1
        if name == "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime":
            return 2
        key = short(name)
        if key in types:
            return key
        schema = all_schemas.get(name, {})
        if "properties" not in schema:
            # An object type declaring no fields (RawExtension, FieldsV1)
            # or a scalar (Quantity, Time, IntOrString): not looked into.
            inner = node(schema, key) if schema.get("type") == "array" or isinstance(schema.get("additionalProperties"), dict) else 0
            return inner
        types[key] = None  # recursion guard
        types[key] = {k: node(v, key + "." + k) for k, v in schema["properties"].items()}
        return key

    write(OUT, kinds(all_schemas, type_node), types)

if __name__ == "__main__":
    main()
