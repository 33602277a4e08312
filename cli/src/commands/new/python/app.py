"""{{name}}: reconciles {{kind}} ({{group}}/{{version}}), written in Python for
the rekon host and built into a WebAssembly component with componentize-py
(``make build``).

The component exports the world ``{{world}}`` of wit/reconciler.wit through the
class ``WitWorld``: ``manifest`` (what it reconciles and may do),
``reconcile`` (called with a fresh instance for every object that needs
attention), ``crds`` (the CustomResourceDefinition of {{kind}}, from crd.py){{#webhook}},
and the webhooks ``webhooks``, ``validate``, ``mutate`` and ``convert``{{/webhook}}. It
reaches the cluster only through the host: ``cluster`` (reads from the
host's cache, writes to the API server) and ``log``. A host call that fails
raises ``componentize_py_types.Err`` holding the WIT ``api-error``;
``reconcile`` raises ``Err(ReconcileError)`` to fail. ``make bindings``
writes the generated bindings out for an editor.
"""

import json
from datetime import datetime, timezone
from typing import Any, List

import wit_world
from componentize_py_types import Err
from wit_world.imports import cluster
from wit_world.imports.log import log
from wit_world.imports.types import (
    Action_Done,
    ApiError,
    ApplyOptions,
    EventType,
    Gvk,
    Level,
    Manifest,
    ObjectRef,
    Owned,
    PatchType_Apply,
    PatchType_Merge,
    Permission,
    Predicate,
    ReconcileError,
    Request,
    Verbs,
)
{{#webhook}}
from wit_world.imports.webhook_types import (
    AdmissionRequest,
    ConversionRequest,
    FailurePolicy,
    Mutation,
    Operation,
    Verdict,
    Webhook,
    Webhooks,
)
{{/webhook}}

from crd import CRD

PRIMARY = Gvk(group="{{group}}", version="{{version}}", kind="{{kind}}")
{{owns_py}}
ALL_VERBS = (
    Verbs.GET | Verbs.LIST | Verbs.WATCH | Verbs.CREATE | Verbs.UPDATE | Verbs.PATCH | Verbs.DELETE
)


class WitWorld(wit_world.WitWorld):
    """The exports of the ``{{world}}`` world."""

    def manifest(self) -> Manifest:
        return Manifest(
            name="{{name}}",
            version="0.1.0",
            primary=PRIMARY,
            owns=[Owned(kind=kind, predicates=[]) for kind in OWNED],
            watches=[],
            finalizer=None,
            permissions=[
                # The primary: read it, write its status.
                Permission(
                    kind=PRIMARY,
                    verbs=Verbs.GET | Verbs.LIST | Verbs.WATCH | Verbs.UPDATE | Verbs.PATCH,
                    namespaces=[],
                ),
                # Owned kinds: every verb.
                *[Permission(kind=kind, verbs=ALL_VERBS, namespaces=[]) for kind in OWNED],
            ],
            max_concurrency=None,
            timeout_ms=None,
            primary_selector=None,
            primary_namespaces=[],
            # Spec changes only: the status this module writes wakes nothing.
            primary_predicates=[Predicate.GENERATION_CHANGED],
            resync_period_ms=None,
            indexes=[],
        )

    def crds(self) -> List[str]:
        return [json.dumps(CRD)]

    def reconcile(self, request: Request) -> Action_Done:
        try:
            return run(request)
        except Err as e:
            raise Err(reconcile_error(e.value))
        except ValueError as e:  # bad JSON: retrying does not fix it
            raise Err(ReconcileError(message=f"JSON: {e}", retry=False))
{{#webhook}}

    # Webhooks: `make dev` runs them on every write, like a cluster would.

    def webhooks(self) -> Webhooks:
        def hook(name: str) -> Webhook:
            return Webhook(
                name=name,
                kinds=[PRIMARY],
                operations=[Operation.CREATE, Operation.UPDATE],
                sub_resources=[],
                namespace_selector=None,
                object_selector=None,
                failure_policy=FailurePolicy.FAIL,
                timeout_seconds=None,
            )

        return Webhooks(validating=[hook("validate")], mutating=[hook("default")], conversions=[])

    def validate(self, request: AdmissionRequest) -> Verdict:
        """Refuses a message longer than 100 characters."""
        obj = json.loads(request.object or "{}")
        message = (obj.get("spec") or {}).get("message") or ""
        if len(message) > 100:
            return Verdict(
                allowed=False, message="spec.message: at most 100 characters", code=422, warnings=[]
            )
        return Verdict(allowed=True, message=None, code=None, warnings=[])

    def mutate(self, request: AdmissionRequest) -> Mutation:
        """Defaults spec.message to "hello"."""
        obj = json.loads(request.object or "{}")
        verdict = Verdict(allowed=True, message=None, code=None, warnings=[])
        spec = obj.get("spec") or {}
        if "message" in spec:
            return Mutation(verdict=verdict, object=None)
        obj["spec"] = {**spec, "message": "hello"}
        return Mutation(verdict=verdict, object=json.dumps(obj))

    def convert(self, request: ConversionRequest) -> List[str]:
        raise Err(f"{{name}} converts nothing (asked for {request.desired_api_version})")
{{/webhook}}


def run(request: Request) -> Action_Done:
    if request.object is None:
        # Gone: owned objects go with it (their owner references).
        return Action_Done()
    obj = json.loads(request.object)
    meta = obj.get("metadata") or {}
    if meta.get("deletionTimestamp"):
        return Action_Done()
    message = (obj.get("spec") or {}).get("message") or "hello"
{{#configmap}}
    # The owned ConfigMap holds the message (server-side apply, with a
    # controller owner reference: deleting the {{kind}} deletes it).
    namespace = request.target.namespace or "default"
    child = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": request.target.name,
            "namespace": namespace,
            "ownerReferences": [owner_reference(obj)],
        },
        "data": {"message": message},
    }
    cluster.patch(
        ObjectRef(kind=CONFIGMAP, namespace=namespace, name=request.target.name),
        PatchType_Apply(ApplyOptions(field_manager=None, force=True)),
        json.dumps(child),
    )
{{/configmap}}
    generation = meta.get("generation")
    status = obj.get("status") or {}
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), {})
    if status.get("observedGeneration") == generation and ready.get("status") == "True":
        return Action_Done()  # nothing changed since the last reconcile
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    says = f"says {json.dumps(message)}"
    new_status = {
        "observedGeneration": generation,
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "Reconciled",
                "message": says,
                "lastTransitionTime": now,
                "observedGeneration": generation,
            }
        ],
    }
    cluster.patch_status(request.target, PatchType_Merge(), json.dumps({"status": new_status}))
    cluster.record_event(request.target, EventType.NORMAL, "Reconciled", says)
    log(Level.INFO, "reconciled", [("message", message)])
    return Action_Done()


def owner_reference(obj: Any) -> Any:
    """A controller owner reference to ``obj``."""
    meta = obj["metadata"]
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": meta["name"],
        "uid": meta.get("uid"),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def reconcile_error(error: Any) -> ReconcileError:
    """A host call's failure as the contract's reconcile-error: conflicts
    and server errors are retried."""
    if isinstance(error, ApiError):
        retry = error.code in (409, 429) or error.code >= 500
        return ReconcileError(message=f"{error.code} {error.reason}: {error.message}", retry=retry)
    return ReconcileError(message=str(error), retry=True)
