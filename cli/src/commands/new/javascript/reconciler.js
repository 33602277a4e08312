// @ts-check
// {{name}}: reconciles {{kind}} ({{group}}/{{version}}), written in JavaScript
// for the rekon host and built into a WebAssembly component with
// componentize-js (`make build`).
//
// The component exports the world `{{world}}` of wit/reconciler.wit:
// `manifest` (what it reconciles and may do), `reconcile` (called with a
// fresh instance for every object that needs attention), `crds` (the
// CustomResourceDefinition of {{kind}}, from ./crd.js){{#webhook}}, and the webhooks
// `webhooks`, `validate`, `mutate` and `convert`{{/webhook}}. It reaches the cluster only
// through the host: `cluster` (reads from the host's cache, writes to the
// API server) and `log`. The types are in types/rekon.d.ts.

import * as cluster from 'rekon:reconciler/cluster@0.4.0';
import { log } from 'rekon:reconciler/log@0.4.0';
import { CRD } from './crd.js';

/** @type {Rekon.Gvk} */
const PRIMARY = { group: '{{group}}', version: '{{version}}', kind: '{{kind}}' };
{{owns_js}}
const ALL_VERBS = { get: true, list: true, watch: true, create: true, update: true, patch: true, delete: true };

/** @returns {Rekon.Manifest} */
export function manifest() {
  return {
    name: '{{name}}',
    version: '0.1.0',
    primary: PRIMARY,
    owns: OWNED.map((kind) => ({ kind, predicates: [] })),
    watches: [],
    finalizer: undefined,
    permissions: [
      // The primary: read it, write its status.
      { kind: PRIMARY, verbs: { get: true, list: true, watch: true, update: true, patch: true }, namespaces: [] },
      // Owned kinds: every verb.
      ...OWNED.map((kind) => ({ kind, verbs: ALL_VERBS, namespaces: [] })),
    ],
    maxConcurrency: undefined,
    timeoutMs: undefined,
    primarySelector: undefined,
    primaryNamespaces: [],
    // Spec changes only: the status this module writes wakes nothing.
    primaryPredicates: ['generation-changed'],
    resyncPeriodMs: undefined,
    indexes: [],
  };
}

/** @returns {string[]} */
export function crds() {
  return [JSON.stringify(CRD)];
}

/**
 * @param {Rekon.Request} request
 * @returns {Rekon.Action}
 */
export function reconcile(request) {
  try {
    return run(request);
  } catch (e) {
    throw { payload: reconcileError(e) };
  }
}

/**
 * @param {Rekon.Request} request
 * @returns {Rekon.Action}
 */
function run(request) {
  if (request.object === undefined) {
    // Gone: owned objects go with it (their owner references).
    return { tag: 'done' };
  }
  const object = JSON.parse(request.object);
  if (object.metadata?.deletionTimestamp) {
    return { tag: 'done' };
  }
  const message = object.spec?.message ?? 'hello';
{{#configmap}}
  // The owned ConfigMap holds the message (server-side apply, with a
  // controller owner reference: deleting the {{kind}} deletes it).
  const child = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: request.target.name,
      namespace: request.target.namespace ?? 'default',
      ownerReferences: [ownerReference(object)],
    },
    data: { message },
  };
  cluster.patch(
    { kind: CONFIGMAP, namespace: child.metadata.namespace, name: child.metadata.name },
    { tag: 'apply', val: { fieldManager: undefined, force: true } },
    JSON.stringify(child),
  );
{{/configmap}}
  const generation = object.metadata?.generation;
  const ready = (object.status?.conditions ?? []).find((/** @type {any} */ c) => c.type === 'Ready');
  if (object.status?.observedGeneration === generation && ready?.status === 'True') {
    return { tag: 'done' }; // nothing changed since the last reconcile
  }
  const status = {
    observedGeneration: generation,
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'Reconciled',
        message: `says ${JSON.stringify(message)}`,
        lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        observedGeneration: generation,
      },
    ],
  };
  cluster.patchStatus(request.target, { tag: 'merge' }, JSON.stringify({ status }));
  cluster.recordEvent(request.target, 'normal', 'Reconciled', `says ${JSON.stringify(message)}`);
  log('info', 'reconciled', [['message', message]]);
  return { tag: 'done' };
}

/**
 * A controller owner reference to `object`.
 * @param {any} object
 */
function ownerReference(object) {
  return {
    apiVersion: object.apiVersion,
    kind: object.kind,
    name: object.metadata.name,
    uid: object.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/**
 * A host call's failure ({payload: api-error}) or any other throw, as the
 * contract's reconcile-error: conflicts and server errors are retried.
 * @param {any} e
 * @returns {Rekon.ReconcileError}
 */
function reconcileError(e) {
  const api = e?.payload;
  if (api && typeof api.code === 'number') {
    const retry = api.code === 409 || api.code === 429 || api.code >= 500;
    return { message: `${api.code} ${api.reason}: ${api.message}`, retry };
  }
  return { message: String(e?.message ?? e), retry: true };
}
{{#webhook}}

// Webhooks: `make dev` runs them on every write, like a cluster would.

/** @returns {Rekon.Webhooks} */
export function webhooks() {
  /** @type {Rekon.Webhook} */
  const base = {
    name: '',
    kinds: [PRIMARY],
    operations: ['create', 'update'],
    subResources: [],
    namespaceSelector: undefined,
    objectSelector: undefined,
    failurePolicy: 'fail',
    timeoutSeconds: undefined,
  };
  return {
    validating: [{ ...base, name: 'validate' }],
    mutating: [{ ...base, name: 'default' }],
    conversions: [],
  };
}

/**
 * Refuses a message longer than 100 characters.
 * @param {Rekon.AdmissionRequest} request
 * @returns {Rekon.Verdict}
 */
export function validate(request) {
  const object = JSON.parse(request.object ?? '{}');
  const message = object.spec?.message ?? '';
  if (message.length > 100) {
    return { allowed: false, message: 'spec.message: at most 100 characters', code: 422, warnings: [] };
  }
  return { allowed: true, message: undefined, code: undefined, warnings: [] };
}

/**
 * Defaults spec.message to "hello".
 * @param {Rekon.AdmissionRequest} request
 * @returns {Rekon.Mutation}
 */
export function mutate(request) {
  const object = JSON.parse(request.object ?? '{}');
  const verdict = { allowed: true, message: undefined, code: undefined, warnings: [] };
  if (object.spec?.message !== undefined) {
    return { verdict, object: undefined };
  }
  object.spec = { ...object.spec, message: 'hello' };
  return { verdict, object: JSON.stringify(object) };
}

/**
 * One version: nothing to convert.
 * @param {Rekon.ConversionRequest} request
 * @returns {string[]}
 */
export function convert(request) {
  throw `{{name}} converts nothing (asked for ${request.desiredApiVersion})`;
}
{{/webhook}}
