#!/usr/bin/env python3
"""tools/managed-fields.py

Regenerates store/src/fieldmanager/types.json: how server-side apply and
managedFields see each built-in kind, as a real kube-apiserver publishes it
in its OpenAPI v3 documents: which lists are sets, which are maps by which
keys (and their keys' defaults), which structs and maps are atomic (owned
as one field: a LabelSelector, a RoleRef, an OwnerReference, a Service's
selector). The embedded server's field manager types built-in objects with
it (store/src/fieldmanager/builtin.rs).

Usage, against a real API server (`rekon dev --kube-assets DIR
--api-only --write-kubeconfig FILE`, or any kube-apiserver the file should
follow), and the same version's `k8s.io` sources (`staging/src/k8s.io` of
the Kubernetes tree: `api/`, `apimachinery/` and `apiextensions-apiserver/`):

    KUBECONFIG=... tools/managed-fields.py - K8S_IO     # fetches with kubectl
    tools/managed-fields.py DIR K8S_IO                  # or reads DIR/*.json

The Go types say which struct fields are values, not pointers: an object
the server creates is compared with its type's zero value, where such a
field is there already (`"spec": {}`), so it is not owned as a member
itself (no `"."` in its managedFields), only what is set below it.

The file holds `kinds` (`group/version/Kind`, `v1/Kind` for the core
group, to its type) and `types`, each `{"f": {field: node}}` with `"a": 1`
when the type is atomic, `"v": [field, ...]`, its fields that hold a
struct by value, and `"z": {field: value}`, what its zero value holds of
its other fields: null for a pointer, list or map without `omitempty`, a
scalar's zero without it, a time's null, and `"e": [field, ...]`, its scalars
held by value with `omitempty`, which Go does not write when zero (a
Deployment status's `replicas: 0`). A node is:
    0                            a scalar, or a value not looked into
    "T"                          a struct of type T ("T@granular", "T@atomic":
                                 T as a field typed otherwise sees it)
    {"l": node, "t": "atomic"}   a list, owned whole
    {"l": node, "t": "set"}      a list of scalars, each owned (v:...)
    {"l": node, "t": "map", "k": [keys], "d": {key: default}}
                                 a list of items owned by their keys (k:{...})
    {"m": node}                  a map, each entry owned ("a": 1: atomic)
"""

import os
import re
import sys

from openapi_schemas import ROOT, kinds, ref_of, schemas, short, write

OUT = os.path.join(ROOT, "store", "src", "fieldmanager", "types.json")


def value_structs(k8s_io):
    """`group.version.Type` (as the documents shorten names) to the json
    names of its fields that hold a struct by value."""
    field = re.compile(r'^\s+(\w+)\s+([\w.*\[\]]+)\s+`json:"([^,"]*)([^"]*)"')
    # An embedded struct with a name of its own (`metav1.ObjectMeta
    # `json:"metadata,omitempty"`` in a PodTemplateSpec).
    embedded = re.compile(r'^\s+([\w.*]+)\s+`json:"([^,"]+)([^"]*)"')
    structs = {}
    for base in (
        os.path.join(k8s_io, "api"),
        os.path.join(k8s_io, "apimachinery", "pkg", "apis"),
        os.path.join(k8s_io, "apiextensions-apiserver", "pkg", "apis"),
    ):
        for folder, _, files in os.walk(base):
            if "types.go" not in files:
                continue
            rel = os.path.relpath(folder, base).split(os.sep)
            if len(rel) != 2:
                continue
            package = ".".join(rel)
            current = None
            for line in open(os.path.join(folder, "types.go")):
                start = re.match(r"^type (\w+) struct \{", line)
                if start:
                    current = structs.setdefault(f"{package}.{start.group(1)}", {})
                    continue
                if line.startswith("}"):
                    current = None
                    continue
                m = field.match(line) if current is not None else None
                if m:
                    current[m.group(3)] = (m.group(2), "omitempty" in m.group(4), "omitzero" in m.group(4))
                    continue
                m = embedded.match(line) if current is not None else None
                if m:
                    current[m.group(2)] = (m.group(1), "omitempty" in m.group(3), "omitzero" in m.group(3))
    names = {name.rsplit(".", 1)[1] for name in structs}
    # Structs with an encoding of their own: what their zero value is.
    special = {"Time": None, "MicroTime": None, "Quantity": "0", "IntOrString": 0, "Duration": "0s"}
    scalars = {"string": "", "bool": False}
    for folder, _, files in os.walk(os.path.join(k8s_io, "api")):
        for f in files:
            if f.endswith(".go") and not f.endswith("_test.go"):
                for line in open(os.path.join(folder, f)):
                    m = re.match(r"^type (\w+) (string|bool|u?int\d*|float\d+)\s*$", line)
                    if m:
                        scalars[m.group(1)] = "" if m.group(2) == "string" else (False if m.group(2) == "bool" else 0)
    out = {}
    for name, fields in structs.items():
        values, zeros, omitted = [], {}, []
        for json_name, (go_type, omitempty, omitzero) in fields.items():
            if not json_name or json_name == "-":
                continue
            base = go_type.rsplit(".", 1)[-1]
            if go_type.startswith(("*", "[]", "map[")):
                # A nil pointer, slice or map: null unless omitted.
                if not omitempty:
                    zeros[json_name] = None
            elif base in special:
                # A struct is never omitted (but with `omitzero`, as an
                # ObjectMeta's creationTimestamp); these encode as scalars.
                if not omitzero:
                    zeros[json_name] = special[base]
            elif base in names:
                values.append(json_name)
            elif not omitempty and (base in scalars or re.match(r"^(u?int\d*|float\d+)$", base)):
                zeros[json_name] = scalars.get(base, 0)
            elif omitempty and (base in scalars or re.match(r"^(u?int\d*|float\d+)$", base)):
                # A scalar held by value: its zero is not written at all.
                omitted.append(json_name)
        out[name] = (values, zeros, omitted)
    return out


def main():
    values = value_structs(sys.argv[2]) if len(sys.argv) > 2 else {}
    all_schemas = schemas(sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "-" else None, skip=())
    types = {}

    def node(schema):
        ref = ref_of(schema)
        if ref is not None:
            return overridden(type_node(ref), schema.get("x-kubernetes-map-type"))
        if schema.get("type") == "array" and "items" in schema:
            item = node(schema["items"])
            kind = schema.get("x-kubernetes-list-type", "atomic")
            out = {"l": item, "t": kind}
            if kind == "map":
                keys = schema.get("x-kubernetes-list-map-keys", [])
                out["k"] = keys
                item_schema = all_schemas.get(ref_of(schema["items"]) or "", schema["items"])
                defaults = {
                    k: item_schema.get("properties", {}).get(k, {}).get("default")
                    for k in keys
                }
                defaults = {k: v for k, v in defaults.items() if v is not None}
                if defaults:
                    out["d"] = defaults
            return out
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and "properties" not in schema:
            out = {"m": node(extra)}
            if schema.get("x-kubernetes-map-type") == "atomic":
                out["a"] = 1
            return out
        return 0

    def overridden(key, map_type):
        # A field may type its struct otherwise than the struct's own
        # marker (`+structType=granular` on a PersistentVolume's
        # `claimRef`, an ObjectReference, atomic elsewhere): the field's
        # schema says so beside its `$ref`, and the field gets a copy of
        # the type, `T@granular` or `T@atomic`, with its own atomicity.
        if map_type not in ("atomic", "granular") or not isinstance(key, str):
            return key
        entry = types.get(key)
        if entry is None or ("a" in entry) == (map_type == "atomic"):
            return key
        variant = dict(entry)
        variant.pop("a", None)
        if map_type == "atomic":
            variant["a"] = 1
        types[f"{key}@{map_type}"] = variant
        return f"{key}@{map_type}"

    def type_node(name):
        key = short(name)
        if key in types:
            return key
        schema = all_schemas.get(name, {})
        if "properties" not in schema:
            # A scalar (Quantity, Time, IntOrString) or a value that
            # declares no fields (RawExtension, FieldsV1): a leaf.
            return node(schema) if schema.get("type") == "array" or isinstance(schema.get("additionalProperties"), dict) else 0
        types[key] = None  # recursion guard
        entry = {"f": {k: node(v) for k, v in schema["properties"].items()}}
        if schema.get("x-kubernetes-map-type") == "atomic":
            entry["a"] = 1
        # What the type's zero value holds: the structs (with fields of
        # their own) it holds by value, and null for each pointer, list and
        # map the encoding does not omit.
        by_value, zeros, omitted = values.get(key, ([], {}, []))
        omitted = [f for f in omitted if entry["f"].get(f) == 0]
        by_value = [f for f in by_value if isinstance(entry["f"].get(f), str)]
        zeros = {f: v for f, v in zeros.items() if f in entry["f"] and f not in by_value}
        if by_value:
            entry["v"] = sorted(by_value)
        if zeros:
            entry["z"] = dict(sorted(zeros.items()))
        if omitted:
            entry["e"] = sorted(omitted)
        types[key] = entry
        return key

    write(OUT, kinds(all_schemas, type_node, skip=()), types)

if __name__ == "__main__":
    main()
