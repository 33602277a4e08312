"""tools/openapi_schemas.py

What tools/builtin-fields.py and tools/managed-fields.py share: the
schemas of a real kube-apiserver's OpenAPI v3 documents (read from a folder
of them, or fetched with kubectl), their names as the generated files
shorten them, the `$ref` a schema names, every built-in kind's schema, and
the writing of the generated file.
"""

import json
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PREFIXES = (
    "io.k8s.api.",
    "io.k8s.apimachinery.pkg.apis.",
    "io.k8s.apimachinery.pkg.",
    "io.k8s.apiextensions-apiserver.pkg.apis.",
)
# CustomResourceDefinitions are decoded by their own code (builtin-fields
# skips them); their managedFields follow their type like any kind's.
SKIP_GROUPS = ("apiextensions.k8s.io",)
# Kinds that are no objects a client stores.
NOT_OBJECTS = ("Status", "WatchEvent", "DeleteOptions", "APIResourceList", "APIGroup", "APIGroupList", "APIVersions")


def short(name):
    """`io.k8s.api.apps.v1.Deployment` as `apps.v1.Deployment`."""
    for p in PREFIXES:
        if name.startswith(p):
            return name[len(p):]
    return name


def documents(folder, skip=SKIP_GROUPS):
    """The documents: `folder/*.json`, or (folder None) the API server's,
    fetched with `$KUBECTL` (default `kubectl`)."""
    if folder is not None:
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
            if len(parts) == 3 and parts[1] in skip:
                continue
            yield json.loads(subprocess.check_output([kubectl, "get", "--raw", "/openapi/v3/" + path]))


def schemas(folder, skip=SKIP_GROUPS):
    """Every schema of the documents, by its full name."""
    out = {}
    for doc in documents(folder, skip):
        out.update(doc.get("components", {}).get("schemas", {}))
    return out


def ref_of(schema):
    """The name a schema refers to (`$ref`, or one in `allOf`), if any."""
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[1]
    for sub in schema.get("allOf", []):
        if "$ref" in sub:
            return sub["$ref"].rsplit("/", 1)[1]
    return None


def kinds(all_schemas, type_node, skip=SKIP_GROUPS):
    """Each built-in object kind (`group/version/Kind`, `v1/Kind` for the
    core group) to `type_node` of its schema's name."""
    out = {}
    for name, schema in sorted(all_schemas.items()):
        for gvk in schema.get("x-kubernetes-group-version-kind", []):
            group, version, kind = gvk["group"], gvk["version"], gvk["kind"]
            if group in skip or kind.endswith("List") or kind in NOT_OBJECTS:
                continue
            if "properties" not in schema or "metadata" not in schema["properties"]:
                continue
            gv = f"{group}/{version}" if group else version
            out[f"{gv}/{kind}"] = type_node(name)
    return out


def write(path, kinds_out, types):
    """Writes `{"kinds": ..., "types": ...}` compactly to `path`."""
    out = {"kinds": dict(sorted(kinds_out.items())), "types": dict(sorted(types.items()))}
    with open(path, "w") as fh:
        json.dump(out, fh, separators=(",", ":"), sort_keys=False)
        fh.write("\n")
    print(f"{path}: {len(kinds_out)} kinds, {len(types)} types, {os.path.getsize(path)} bytes")
