#!/usr/bin/env python3
"""Writes printers.json, the columns builtin/columns.rs reads: each kind's
[]metav1.TableColumnDefinition from kube-apiserver's
pkg/printers/internalversion/printers.go (AddHandlers), the SwaggerDoc()
texts they name from staging/src/k8s.io/{api,apimachinery}, and
kube-aggregator's APIService columns, for the kinds KINDS lists.

    python3 printers.py ~/src/kubernetes > printers.json
"""
import json
import re
import sys

KINDS = """APIService CertificateSigningRequest ClusterRoleBinding ComponentStatus ConfigMap
CSIDriver ControllerRevision CronJob DaemonSet Deployment EndpointSlice Endpoints Event HorizontalPodAutoscaler
Ingress IngressClass Job Lease MutatingWebhookConfiguration Namespace NetworkPolicy Node
PersistentVolume PersistentVolumeClaim Pod PodDisruptionBudget PodTemplate PriorityClass
ReplicaSet ReplicationController ResourceQuota RoleBinding RuntimeClass Secret Service
ServiceAccount Scale StatefulSet StorageClass ValidatingWebhookConfiguration""".split()
RENAMED = {"MutatingWebhook": "MutatingWebhookConfiguration", "ValidatingWebhook": "ValidatingWebhookConfiguration"}
NAME = {"name": "Name", "type": "string", "format": "name", "doc": "meta/v1 ObjectMeta.name"}
AGE = {"name": "Age", "type": "string", "doc": "meta/v1 ObjectMeta.creationTimestamp"}
# pkg/registry/apiservice/etcd/etcd.go (ConvertToTable)
APISERVICE = [NAME,
              {"name": "Service", "type": "string", "description": "The reference to the service that hosts this API endpoint."},
              {"name": "Available", "type": "string", "description": "Whether this service is available."},
              AGE]

root = sys.argv[1]
source = open(f"{root}/pkg/printers/internalversion/printers.go").read()
imports = dict(re.findall(r'^\t(\w+) "k8s\.io/(?:api|apimachinery/pkg/apis)/(\w+/\w+)"$', source, re.M))
swagger = {}


def doc(package, kind, field):
    """The SwaggerDoc text of package's kind's field, empty when missing (as Go's map gives)."""
    if package not in swagger:
        path = "apimachinery/pkg/apis" if package == "meta/v1" else "api"
        swagger[package] = open(f"{root}/staging/src/k8s.io/{path}/{package}/types_swagger_doc_generated.go").read()
    block = re.search(r"var map_%s = map\[string\]string\{\n(.*?)\n\}" % kind, swagger[package], re.S)
    for key, text in re.findall(r'^\s*"([^"]*)":\s*(".*"),$', block.group(1), re.M):
        if key == field:
            return json.loads(text)
    return ""


docs = {}


def column(line):
    out = {"name": json.loads(re.search(r'Name: (".*?")', line).group(1)),
           "type": json.loads(re.search(r'Type: (".*?")', line).group(1))}
    if found := re.search(r'Format: (".*?")', line):
        out["format"] = json.loads(found.group(1))
    if found := re.search(r"Priority: (\d+)", line):
        out["priority"] = int(found.group(1))
    description = line[line.index("Description: ") + 13:].rstrip(",").rstrip()[:-1]
    if description.startswith("apiv1.Event{}.InvolvedObject"):
        ref = ("core/v1", "ObjectReference", "fieldPath")
    elif found := re.match(r'(\w+)\.(\w+)\{\}\.SwaggerDoc\(\)\["(\w+)"\]$', description):
        ref = (imports[found.group(1)], found.group(2), found.group(3))
    else:
        out["description"] = json.loads(description)
        return out
    out["doc"] = "%s %s.%s" % ref
    docs[out["doc"]] = doc(*ref)
    return out


body = source[source.index("func AddHandlers"):]
definitions = {name: [column(line.strip()) for line in lines.split("\n") if line.strip().startswith("{Name")]
               for name, lines in re.findall(r"(\w+) := \[\]metav1\.TableColumnDefinition\{\n(.*?)\n\t\}", body, re.S)}
# Columns appended to a definition later (`x = append(x, []metav1.TableColumnDefinition{...}...)`,
# as the CSIDriver's are).
for name, lines in re.findall(r"(\w+) = append\(\1, \[\]metav1\.TableColumnDefinition\{\n(.*?)\n\t\}\.\.\.\)", body, re.S):
    definitions[name] += [column(line.strip()) for line in lines.split("\n") if line.strip().startswith("{Name")]
kinds = {"APIService": APISERVICE}
for definition, printer in re.findall(r"h\.TableHandler\((\w+), print(\w+)\)", body):
    kind = RENAMED.get(printer, printer)
    if kind in KINDS:
        kinds[kind] = definitions[definition]
for field in ("name", "creationTimestamp"):
    docs[f"meta/v1 ObjectMeta.{field}"] = doc("meta/v1", "ObjectMeta", field)

used = {c["doc"] for columns in kinds.values() for c in columns if "doc" in c}
lines = ["{", '  "docs": {']
entries = sorted((k, v) for k, v in docs.items() if k in used)
lines += ["    %s: %s%s" % (json.dumps(k), json.dumps(v, ensure_ascii=False), "," if i < len(entries) - 1 else "")
          for i, (k, v) in enumerate(entries)]
lines += ["  },", '  "kinds": {']
for i, (kind, columns) in enumerate(sorted(kinds.items())):
    lines.append("    %s: [" % json.dumps(kind))
    lines += ["      %s%s" % (json.dumps(c, ensure_ascii=False), "," if j < len(columns) - 1 else "")
              for j, c in enumerate(columns)]
    lines.append("    ]%s" % ("," if i < len(kinds) - 1 else ""))
lines += ["  }", "}"]
print("\n".join(lines))
