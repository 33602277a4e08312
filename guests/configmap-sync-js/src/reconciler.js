// configmap-sync-js: copies ConfigMaps across namespaces (the JavaScript
// twin of guests/configmap-sync, same labels, annotation and finalizer).
//
// A source is a ConfigMap labelled `rekon.dev/sync=true` with the annotation
// `rekon.dev/sync-to: "ns-a,ns-b"`. The reconciler keeps a copy (same name,
// same `data` and `binaryData`) in each listed namespace that exists, by
// server-side apply; it removes copies from namespaces no longer listed, and
// all of them when the source is deleted or unlabelled (the finalizer
// `rekon.dev/sync-cleanup` guarantees it sees the deletion). It watches
// Namespaces (not owned) so that a copy appears as soon as a listed
// namespace is created. A ConfigMap of the same name that is not a copy is
// never overwritten: a `CopyConflict` Warning Event says so. A namespace
// being deleted is skipped like an absent one, and cleanup that finds a
// copy already gone goes on.
//
// The component exports `manifest` and `reconcile`, and a validating
// webhook through `webhooks`, `validate`, `mutate` and `convert` (the world
// `operator` in wit/reconciler.wit): a source must name the namespaces it
// is copied to. It imports `cluster` and `log`. Host calls that
// fail throw an error whose `payload` is the WIT `api-error`
// ({code, reason, message}); `reconcile` turns a throw into the WIT
// `reconcile-error` ({message, retry}).

import * as cluster from 'rekon:reconciler/cluster@0.4.0';
import { log } from 'rekon:reconciler/log@0.4.0';

/** The label marking a source ConfigMap (value `true`). */
export const SYNC_LABEL = 'rekon.dev/sync';
/** The annotation listing the target namespaces, comma-separated. */
export const TARGETS_ANNOTATION = 'rekon.dev/sync-to';
/** The finalizer put on sources. */
export const FINALIZER = 'rekon.dev/sync-cleanup';
/** Label on copies: the source's namespace. */
export const FROM_NAMESPACE_LABEL = 'rekon.dev/synced-from-namespace';
/** Label on copies: the source's name. */
export const FROM_NAME_LABEL = 'rekon.dev/synced-from-name';

const CONFIGMAP = { group: '', version: 'v1', kind: 'ConfigMap' };
const NAMESPACE = { group: '', version: 'v1', kind: 'Namespace' };
const ALL_VERBS = {
  get: true,
  list: true,
  watch: true,
  create: true,
  update: true,
  patch: true,
  delete: true,
};
const READ_VERBS = { get: true, list: true, watch: true };

export function manifest() {
  return {
    name: 'configmap-sync-js',
    version: '0.1.0',
    primary: CONFIGMAP,
    owns: [],
    watches: [
      // A listed namespace appearing must bring its copy: every source is
      // looked at again (non-sources return at once).
      {
        kind: NAMESPACE,
        mapping: { tag: 'all-primaries' },
        labelSelector: undefined,
        predicates: [],
      },
    ],
    finalizer: FINALIZER,
    permissions: [
      // Copies live in any namespace: create, patch and delete them.
      { kind: CONFIGMAP, verbs: ALL_VERBS, namespaces: [] },
      { kind: NAMESPACE, verbs: READ_VERBS, namespaces: [] },
    ],
    maxConcurrency: undefined,
    timeoutMs: undefined,
    // Every ConfigMap, every change: sources are recognised by their label,
    // and a source losing it must be seen.
    primarySelector: undefined,
    primaryNamespaces: [],
    primaryPredicates: [],
    resyncPeriodMs: undefined,
    indexes: [],
  };
}

export function reconcile(request) {
  try {
    return sync(request);
  } catch (e) {
    throw { payload: reconcileError(e) };
  }
}

function sync(request) {
  if (request.object === undefined || request.object === null) {
    return { tag: 'done' };
  }
  const source = JSON.parse(request.object);
  const isSource = source.metadata?.labels?.[SYNC_LABEL] === 'true';
  if (!isSource && !hasFinalizer(source)) {
    return { tag: 'done' }; // not ours: the common, cheap case
  }
  const ns = request.target.namespace ?? '';
  const name = request.target.name;
  if (!isSource || source.metadata?.deletionTimestamp) {
    const removed = deleteCopies(ns, name, []);
    if (removed > 0) {
      log('info', `removed ${removed} copies of ${ns}/${name}`, []);
    }
    removeFinalizer(source);
    return { tag: 'done' };
  }
  const current = addFinalizer(source);
  const synced = [];
  for (const target of targets(current, ns)) {
    // A namespace that does not exist yet, or is being deleted, gets no
    // copy (a deleted namespace takes its copy with it).
    const namespace = getOrNone({ kind: NAMESPACE, namespace: undefined, name: target });
    if (namespace === undefined) {
      log('info', 'target namespace does not exist yet', [['namespace', target]]);
      continue;
    }
    if (namespace.metadata?.deletionTimestamp) {
      continue;
    }
    const existing = getOrNone({ kind: CONFIGMAP, namespace: target, name });
    if (existing !== undefined && !isCopyOf(existing, ns, name)) {
      event(
        request.target,
        'warning',
        'CopyConflict',
        `${target}/${name} exists and is not a copy: left alone`,
      );
      continue;
    }
    try {
      cluster.patch(
        { kind: CONFIGMAP, namespace: target, name },
        { tag: 'apply', val: { fieldManager: undefined, force: true } },
        JSON.stringify(copy(current, ns, name, target)),
      );
    } catch (e) {
      // Its deletion started after the read above.
      if (isNamespaceTerminating(e)) continue;
      throw e;
    }
    synced.push(target);
  }
  deleteCopies(ns, name, synced);
  return { tag: 'done' };
}

/** The target namespaces named by the source's annotation, trimmed,
 * deduplicated, sorted, without the source's own namespace. */
export function targets(source, ownNamespace) {
  const listed = source.metadata?.annotations?.[TARGETS_ANNOTATION] ?? '';
  const out = new Set(
    String(listed)
      .split(',')
      .map((ns) => ns.trim())
      .filter((ns) => ns !== '' && ns !== ownNamespace),
  );
  return [...out].sort();
}

function isCopyOf(existing, ns, name) {
  const labels = existing.metadata?.labels ?? {};
  return labels[FROM_NAMESPACE_LABEL] === ns && labels[FROM_NAME_LABEL] === name;
}

/** The apply intent of the copy of `ns/name` in `target`. */
export function copy(source, ns, name, target) {
  const out = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace: target,
      labels: { [FROM_NAMESPACE_LABEL]: ns, [FROM_NAME_LABEL]: name },
    },
  };
  for (const key of ['data', 'binaryData']) {
    if (source[key] !== undefined && source[key] !== null) {
      out[key] = source[key];
    }
  }
  return out;
}

/** Deletes the copies of `ns/name` outside `keep`; returns how many. */
function deleteCopies(ns, name, keep) {
  const selector = `${FROM_NAMESPACE_LABEL}=${ns},${FROM_NAME_LABEL}=${name}`;
  let removed = 0;
  for (const json of cluster.list(CONFIGMAP, undefined, selector)) {
    const copyNs = JSON.parse(json).metadata?.namespace;
    if (typeof copyNs !== 'string' || keep.includes(copyNs)) {
      continue;
    }
    try {
      cluster.delete({ kind: CONFIGMAP, namespace: copyNs, name }, 'background');
      removed += 1;
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
  return removed;
}

// ----- helpers over the host calls -----

/** Records an Event, best effort: the host writes Events in the background
 * and never fails a reconcile for one, so nothing here waits or throws. */
function event(regarding, type, reason, message) {
  try {
    cluster.recordEvent(regarding, type, reason, message);
  } catch (e) {
    log('warn', `event ${reason} not recorded: ${apiError(e)?.message ?? e}`, []);
  }
}

/** The namespace is being deleted: nothing new may be created in it. */
function isNamespaceTerminating(e) {
  const api = apiError(e);
  return api?.code === 403 && api.message.includes('because it is being terminated');
}

/** Reads an object; `undefined` when it does not exist. */
function getOrNone(target) {
  try {
    return JSON.parse(cluster.get(target));
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

function finalizers(object) {
  const list = object.metadata?.finalizers;
  return Array.isArray(list) ? list : [];
}

function hasFinalizer(object) {
  return finalizers(object).includes(FINALIZER);
}

function refOf(object) {
  return {
    kind: CONFIGMAP,
    namespace: object.metadata?.namespace,
    name: object.metadata?.name,
  };
}

/** A JSON patch test of `metadata.resourceVersion`: if the object changed
 * since it was read, the patch fails and the reconcile is retried. */
function resourceVersionTest(object) {
  const rv = object.metadata?.resourceVersion;
  return typeof rv === 'string'
    ? [{ op: 'test', path: '/metadata/resourceVersion', value: rv }]
    : [];
}

/** Adds the finalizer; returns the object after the patch. */
function addFinalizer(object) {
  if (hasFinalizer(object)) return object;
  const ops = resourceVersionTest(object);
  if (Array.isArray(object.metadata?.finalizers)) {
    ops.push({ op: 'add', path: '/metadata/finalizers/-', value: FINALIZER });
  } else {
    ops.push({ op: 'add', path: '/metadata/finalizers', value: [FINALIZER] });
  }
  return JSON.parse(jsonPatch(object, ops));
}

/** Removes the finalizer (a source already gone is fine). */
function removeFinalizer(object) {
  const index = finalizers(object).indexOf(FINALIZER);
  if (index < 0) return;
  const path = `/metadata/finalizers/${index}`;
  const ops = resourceVersionTest(object);
  ops.push({ op: 'test', path, value: FINALIZER });
  ops.push({ op: 'remove', path });
  try {
    jsonPatch(object, ops);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}

function jsonPatch(object, ops) {
  try {
    return cluster.patch(refOf(object), { tag: 'json' }, JSON.stringify(ops));
  } catch (e) {
    // A failed `test` (422) means the object changed since it was read:
    // report it as the conflict it is, so the reconcile is retried.
    const api = apiError(e);
    if (api && api.code === 422) {
      throw {
        payload: {
          code: 409,
          reason: 'Conflict',
          message: `${object.metadata?.namespace}/${object.metadata?.name} changed since it was read: ${api.message}`,
        },
      };
    }
    throw e;
  }
}

/** The WIT `api-error` carried by a thrown host-call failure, if it is one. */
function apiError(e) {
  const payload = e?.payload;
  return payload && typeof payload.code === 'number' ? payload : undefined;
}

function isNotFound(e) {
  return apiError(e)?.code === 404;
}

/** What a throw becomes, as in the Rust SDK: API failures are retried
 * except those retrying cannot fix (400, 403, 422); bad JSON is not
 * retried; anything else (a bug) is, with its message. */
function reconcileError(e) {
  const api = apiError(e);
  if (api) {
    return {
      message: `${api.code} ${api.reason}: ${api.message}`,
      retry: ![400, 403, 422].includes(api.code),
    };
  }
  const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return { message, retry: !(e instanceof SyntaxError) };
}

// ----- the webhook ---------------------------------------------------------

/** The webhooks: sources (labelled `rekon.dev/sync=true`) are validated. */
export function webhooks() {
  return {
    validating: [
      {
        name: 'validate-sources',
        kinds: [CONFIGMAP],
        operations: ['create', 'update'],
        subResources: [],
        namespaceSelector: undefined,
        objectSelector: `${SYNC_LABEL}=true`,
        failurePolicy: 'ignore',
        timeoutSeconds: undefined,
      },
    ],
    mutating: [],
    conversions: [],
  };
}

const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** A source names at least one namespace, each a valid name. */
export function validate(request) {
  const source = request.object === undefined ? {} : JSON.parse(request.object);
  const listed = (source.metadata?.annotations?.[TARGETS_ANNOTATION] ?? '')
    .split(',')
    .map((ns) => ns.trim())
    .filter((ns) => ns !== '');
  const deny = (message) => ({ allowed: false, message, code: 422, warnings: [] });
  if (listed.length === 0) {
    return deny(`${TARGETS_ANNOTATION} must name at least one namespace`);
  }
  const bad = listed.find((ns) => !NAMESPACE_NAME.test(ns));
  if (bad !== undefined) {
    return deny(`${TARGETS_ANNOTATION}: ${JSON.stringify(bad)} is not a namespace name`);
  }
  const own = request.namespace ?? '';
  const warnings = listed.includes(own)
    ? [`${TARGETS_ANNOTATION} lists the source's own namespace ${own}: it is skipped`]
    : [];
  return { allowed: true, message: undefined, code: undefined, warnings };
}

/** No mutating webhook: allowed, unchanged. */
export function mutate(_request) {
  return {
    verdict: { allowed: true, message: undefined, code: undefined, warnings: [] },
    object: undefined,
  };
}

/** No conversion: the error is the answer. */
export function convert(request) {
  throw `configmap-sync-js converts nothing (asked for ${request.desiredApiVersion})`;
}

/** (0.4) No CustomResourceDefinitions: ConfigMaps are built in. */
export function crds() {
  return [];
}
