"""configmap-sync-py: copies ConfigMaps across namespaces (the Python twin
of guests/configmap-sync, same labels, annotation and finalizer).

A source is a ConfigMap labelled ``rekon.dev/sync=true`` with the annotation
``rekon.dev/sync-to: "ns-a,ns-b"``. The reconciler keeps a copy (same name,
same ``data`` and ``binaryData``) in each listed namespace that exists, by
server-side apply; it removes copies from namespaces no longer listed, and
all of them when the source is deleted or unlabelled (the finalizer
``rekon.dev/sync-cleanup`` guarantees it sees the deletion). It watches
Namespaces (not owned) so that a copy appears as soon as a listed namespace
is created. A ConfigMap of the same name that is not a copy is never
overwritten: a ``CopyConflict`` Warning Event says so. A namespace being
deleted is skipped like an absent one, and cleanup that finds a copy
already gone goes on.

The component exports ``manifest`` and ``reconcile``, and a validating
webhook through ``webhooks``, ``validate``, ``mutate`` and ``convert`` (the
world ``operator`` in wit/reconciler.wit), through the class ``WitWorld``:
a source must name the namespaces it is copied to. It imports ``cluster``
and ``log``. A host call that fails raises
``componentize_py_types.Err`` holding the WIT ``api-error``; ``reconcile``
raises ``Err(ReconcileError)`` to fail.
"""

import json
import re
from typing import Any, List, Optional

import wit_world
from componentize_py_types import Err
from wit_world.imports import cluster
from wit_world.imports.log import log
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
from wit_world.imports.types import (
    Action_Done,
    ApiError,
    ApplyOptions,
    EventType,
    Gvk,
    Level,
    Manifest,
    Mapping_AllPrimaries,
    ObjectRef,
    PatchType_Apply,
    PatchType_Json,
    Permission,
    Propagation,
    ReconcileError,
    Request,
    Verbs,
    Watch,
)

SYNC_LABEL = "rekon.dev/sync"
"""The label marking a source ConfigMap (value ``true``)."""
TARGETS_ANNOTATION = "rekon.dev/sync-to"
"""The annotation listing the target namespaces, comma-separated."""
FINALIZER = "rekon.dev/sync-cleanup"
"""The finalizer put on sources."""
FROM_NAMESPACE_LABEL = "rekon.dev/synced-from-namespace"
"""Label on copies: the source's namespace."""
FROM_NAME_LABEL = "rekon.dev/synced-from-name"
"""Label on copies: the source's name."""

CONFIGMAP = Gvk(group="", version="v1", kind="ConfigMap")
NAMESPACE = Gvk(group="", version="v1", kind="Namespace")
ALL_VERBS = (
    Verbs.GET | Verbs.LIST | Verbs.WATCH | Verbs.CREATE | Verbs.UPDATE | Verbs.PATCH | Verbs.DELETE
)
READ_VERBS = Verbs.GET | Verbs.LIST | Verbs.WATCH


class WitWorld(wit_world.WitWorld):
    """The exports of the ``operator`` world."""

    def webhooks(self) -> Webhooks:
        return Webhooks(
            validating=[
                Webhook(
                    name="validate-sources",
                    kinds=[CONFIGMAP],
                    operations=[Operation.CREATE, Operation.UPDATE],
                    sub_resources=[],
                    namespace_selector=None,
                    object_selector=f"{SYNC_LABEL}=true",
                    failure_policy=FailurePolicy.IGNORE,
                    timeout_seconds=None,
                )
            ],
            mutating=[],
            conversions=[],
        )

    def validate(self, request: AdmissionRequest) -> Verdict:
        return validate_source(request)

    def mutate(self, request: AdmissionRequest) -> Mutation:
        return Mutation(
            verdict=Verdict(allowed=True, message=None, code=None, warnings=[]), object=None
        )

    def convert(self, request: ConversionRequest) -> List[str]:
        raise Err(f"configmap-sync-py converts nothing (asked for {request.desired_api_version})")

    def crds(self) -> List[str]:
        """(0.4) No CustomResourceDefinitions: ConfigMaps are built in."""
        return []

    def manifest(self) -> Manifest:
        return Manifest(
            name="configmap-sync-py",
            version="0.1.0",
            primary=CONFIGMAP,
            owns=[],
            # A listed namespace appearing must bring its copy: every source
            # is looked at again (non-sources return at once).
            watches=[
                Watch(
                    kind=NAMESPACE,
                    mapping=Mapping_AllPrimaries(),
                    label_selector=None,
                    predicates=[],
                )
            ],
            finalizer=FINALIZER,
            permissions=[
                # Copies live in any namespace: create, patch and delete them.
                Permission(kind=CONFIGMAP, verbs=ALL_VERBS, namespaces=[]),
                Permission(kind=NAMESPACE, verbs=READ_VERBS, namespaces=[]),
            ],
            max_concurrency=None,
            timeout_ms=None,
            # Every ConfigMap, every change: sources are recognised by their
            # label, and a source losing it must be seen.
            primary_selector=None,
            primary_namespaces=[],
            primary_predicates=[],
            resync_period_ms=None,
            indexes=[],
        )

    def reconcile(self, request: Request) -> Action_Done:
        try:
            return sync(request)
        except Err as e:
            raise Err(reconcile_error(e.value))
        except ValueError as e:  # bad JSON: retrying does not fix it
            raise Err(ReconcileError(message=f"JSON: {e}", retry=False))


NAMESPACE_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


def validate_source(request: AdmissionRequest) -> Verdict:
    """A source names at least one namespace, each a valid name."""
    source = json.loads(request.object) if request.object is not None else {}
    annotations = (source.get("metadata") or {}).get("annotations") or {}
    listed = [ns.strip() for ns in annotations.get(TARGETS_ANNOTATION, "").split(",")]
    listed = [ns for ns in listed if ns]

    def deny(message: str) -> Verdict:
        return Verdict(allowed=False, message=message, code=422, warnings=[])

    if not listed:
        return deny(f"{TARGETS_ANNOTATION} must name at least one namespace")
    for ns in listed:
        if not NAMESPACE_NAME.match(ns):
            return deny(f"{TARGETS_ANNOTATION}: {json.dumps(ns)} is not a namespace name")
    own = request.namespace or ""
    warnings = (
        [f"{TARGETS_ANNOTATION} lists the source's own namespace {own}: it is skipped"]
        if own in listed
        else []
    )
    return Verdict(allowed=True, message=None, code=None, warnings=warnings)


def sync(request: Request) -> Action_Done:
    if request.object is None:
        return Action_Done()
    source = json.loads(request.object)
    meta = source.get("metadata") or {}
    is_source = (meta.get("labels") or {}).get(SYNC_LABEL) == "true"
    if not is_source and not has_finalizer(source):
        return Action_Done()  # not ours: the common, cheap case
    ns = request.target.namespace or ""
    name = request.target.name
    if not is_source or meta.get("deletionTimestamp"):
        removed = delete_copies(ns, name, [])
        if removed > 0:
            log(Level.INFO, f"removed {removed} copies of {ns}/{name}", [])
        remove_finalizer(source)
        return Action_Done()
    current = add_finalizer(source)
    synced: List[str] = []
    for target in targets(current, ns):
        # A namespace that does not exist yet, or is being deleted, gets no
        # copy (a deleted namespace takes its copy with it).
        namespace = get_or_none(ObjectRef(kind=NAMESPACE, namespace=None, name=target))
        if namespace is None:
            log(Level.INFO, "target namespace does not exist yet", [("namespace", target)])
            continue
        if (namespace.get("metadata") or {}).get("deletionTimestamp"):
            continue
        existing = get_or_none(ObjectRef(kind=CONFIGMAP, namespace=target, name=name))
        if existing is not None and not is_copy_of(existing, ns, name):
            event(
                request.target,
                EventType.WARNING,
                "CopyConflict",
                f"{target}/{name} exists and is not a copy: left alone",
            )
            continue
        try:
            cluster.patch(
                ObjectRef(kind=CONFIGMAP, namespace=target, name=name),
                PatchType_Apply(ApplyOptions(field_manager=None, force=True)),
                json.dumps(copy(current, ns, name, target)),
            )
        except Err as e:
            if is_namespace_terminating(e):
                continue  # its deletion started after the read above
            raise
        synced.append(target)
    delete_copies(ns, name, synced)
    return Action_Done()


def targets(source: Any, own_namespace: str) -> List[str]:
    """The target namespaces named by the source's annotation, trimmed,
    deduplicated, sorted, without the source's own namespace."""
    annotations = (source.get("metadata") or {}).get("annotations") or {}
    listed = str(annotations.get(TARGETS_ANNOTATION) or "")
    return sorted({ns.strip() for ns in listed.split(",")} - {"", own_namespace})


def is_copy_of(existing: Any, ns: str, name: str) -> bool:
    labels = (existing.get("metadata") or {}).get("labels") or {}
    return labels.get(FROM_NAMESPACE_LABEL) == ns and labels.get(FROM_NAME_LABEL) == name


def copy(source: Any, ns: str, name: str, target: str) -> Any:
    """The apply intent of the copy of ``ns/name`` in ``target``."""
    out = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "namespace": target,
            "labels": {FROM_NAMESPACE_LABEL: ns, FROM_NAME_LABEL: name},
        },
    }
    for key in ("data", "binaryData"):
        if source.get(key) is not None:
            out[key] = source[key]
    return out


def delete_copies(ns: str, name: str, keep: List[str]) -> int:
    """Deletes the copies of ``ns/name`` outside ``keep``; returns how many."""
    selector = f"{FROM_NAMESPACE_LABEL}={ns},{FROM_NAME_LABEL}={name}"
    removed = 0
    for item in cluster.list(CONFIGMAP, None, selector):
        copy_ns = (json.loads(item).get("metadata") or {}).get("namespace")
        if not isinstance(copy_ns, str) or copy_ns in keep:
            continue
        try:
            cluster.delete(ObjectRef(kind=CONFIGMAP, namespace=copy_ns, name=name), Propagation.BACKGROUND)
            removed += 1
        except Err as e:
            if not is_not_found(e):
                raise
    return removed


# ----- helpers over the host calls -----


def is_not_found(e: Err) -> bool:
    return isinstance(e.value, ApiError) and e.value.code == 404


def is_namespace_terminating(e: Err) -> bool:
    """The namespace is being deleted: nothing new may be created in it."""
    return (
        isinstance(e.value, ApiError)
        and e.value.code == 403
        and "because it is being terminated" in e.value.message
    )


def event(regarding: ObjectRef, event_type: EventType, reason: str, message: str) -> None:
    """Records an Event, best effort: the host writes Events in the
    background and never fails a reconcile for one."""
    try:
        cluster.record_event(regarding, event_type, reason, message)
    except Err as e:
        log(Level.WARN, f"event {reason} not recorded: {e.value}", [])


def get_or_none(target: ObjectRef) -> Optional[Any]:
    """Reads an object; ``None`` when it does not exist."""
    try:
        return json.loads(cluster.get(target))
    except Err as e:
        if is_not_found(e):
            return None
        raise


def finalizers(obj: Any) -> List[str]:
    found = (obj.get("metadata") or {}).get("finalizers")
    return found if isinstance(found, list) else []


def has_finalizer(obj: Any) -> bool:
    return FINALIZER in finalizers(obj)


def resource_version_test(obj: Any) -> List[Any]:
    """A JSON patch test of ``metadata.resourceVersion``: if the object
    changed since it was read, the patch fails and the reconcile is retried."""
    rv = (obj.get("metadata") or {}).get("resourceVersion")
    return [{"op": "test", "path": "/metadata/resourceVersion", "value": rv}] if isinstance(rv, str) else []


def add_finalizer(obj: Any) -> Any:
    """Adds the finalizer; returns the object after the patch."""
    if has_finalizer(obj):
        return obj
    ops = resource_version_test(obj)
    if isinstance((obj.get("metadata") or {}).get("finalizers"), list):
        ops.append({"op": "add", "path": "/metadata/finalizers/-", "value": FINALIZER})
    else:
        ops.append({"op": "add", "path": "/metadata/finalizers", "value": [FINALIZER]})
    return json.loads(json_patch(obj, ops))


def remove_finalizer(obj: Any) -> None:
    """Removes the finalizer (a source already gone is fine)."""
    current = finalizers(obj)
    if FINALIZER not in current:
        return
    path = f"/metadata/finalizers/{current.index(FINALIZER)}"
    ops = resource_version_test(obj)
    ops.append({"op": "test", "path": path, "value": FINALIZER})
    ops.append({"op": "remove", "path": path})
    try:
        json_patch(obj, ops)
    except Err as e:
        if not is_not_found(e):
            raise


def json_patch(obj: Any, ops: List[Any]) -> str:
    meta = obj.get("metadata") or {}
    target = ObjectRef(kind=CONFIGMAP, namespace=meta.get("namespace"), name=meta.get("name", ""))
    try:
        return cluster.patch(target, PatchType_Json(), json.dumps(ops))
    except Err as e:
        # A failed `test` (422) means the object changed since it was read:
        # report it as the conflict it is, so the reconcile is retried.
        if isinstance(e.value, ApiError) and e.value.code == 422:
            raise Err(
                ApiError(
                    code=409,
                    reason="Conflict",
                    message=f"{target.namespace}/{target.name} changed since it was read: {e.value.message}",
                )
            )
        raise


def reconcile_error(error: Any) -> ReconcileError:
    """What a failed host call becomes, as in the Rust SDK: retried except
    for what retrying cannot fix (400, 403, 422)."""
    if isinstance(error, ApiError):
        return ReconcileError(
            message=f"{error.code} {error.reason}: {error.message}",
            retry=error.code not in (400, 403, 422),
        )
    return ReconcileError(message=str(error), retry=True)
