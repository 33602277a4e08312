// TypeScript declarations of the rekon contract, `rekon:reconciler@0.4.0`
// (wit/reconciler.wit), as componentize-js maps it to JavaScript:
// records are objects with camelCase fields, variants `{tag, val}`, enums
// strings, flags objects of booleans, `option<T>` is `T | undefined`,
// `u64` a BigInt, and a `result` returned by an import is its `ok` value
// or a throw whose `payload` is the error. `rekon new --lang javascript`
// copies this file into `types/`: `// @ts-check` in a module (and `tsc -p
// jsconfig.json`, or an editor) then checks the calls. The types are in the
// namespace `Rekon` (`/** @param {Rekon.Request} request */`).

declare namespace Rekon {
  /** A Kubernetes kind: API group (`""` for the core group), version and kind. */
  export interface Gvk {
    group: string;
    version: string;
    kind: string;
  }

  /** Names one object (that may or may not exist). */
  export interface ObjectRef {
    kind: Gvk;
    /** `undefined` for cluster-scoped kinds. */
    namespace: string | undefined;
    name: string;
  }

  /** How an event on a watched kind is turned into requests for primaries. */
  export type Mapping =
    | { tag: 'owner-reference' }
    | { tag: 'label'; val: string }
    | { tag: 'same-name' }
    | { tag: 'all-primaries' };

  /** Which changes of a source's objects queue reconciles. */
  export type Predicate =
    | 'generation-changed'
    | 'labels-changed'
    | 'annotations-changed'
    | 'resource-version-changed';

  /** A kind the reconciler watches besides its primary and owned kinds. */
  export interface Watch {
    kind: Gvk;
    mapping: Mapping;
    labelSelector: string | undefined;
    predicates: Predicate[];
  }

  /** A kind the primary owns (through a controller ownerReference). */
  export interface Owned {
    kind: Gvk;
    predicates: Predicate[];
  }

  /** What an index keys each object by. */
  export type IndexKey = { tag: 'field'; val: string } | { tag: 'label'; val: string };

  /** A named index the host keeps over a kind the reconciler reads. */
  export interface Index {
    name: string;
    kind: Gvk;
    key: IndexKey;
  }

  /** The API verbs a permission may grant. */
  export interface Verbs {
    get?: boolean;
    list?: boolean;
    watch?: boolean;
    create?: boolean;
    update?: boolean;
    patch?: boolean;
    delete?: boolean;
  }

  /** One grant: verbs on a kind, optionally limited to some namespaces. */
  export interface Permission {
    kind: Gvk;
    verbs: Verbs;
    /** Empty: every namespace. */
    namespaces: string[];
  }

  /** What a reconciler declares when it is loaded (`manifest`). */
  export interface Manifest {
    name: string;
    version: string;
    primary: Gvk;
    owns: Owned[];
    watches: Watch[];
    finalizer: string | undefined;
    permissions: Permission[];
    maxConcurrency: number | undefined;
    timeoutMs: number | undefined;
    primarySelector: string | undefined;
    primaryNamespaces: string[];
    primaryPredicates: Predicate[];
    resyncPeriodMs: bigint | undefined;
    indexes: Index[];
  }

  /** Why a reconcile was queued. */
  export type Reason =
    | 'added'
    | 'updated'
    | 'deleted'
    | 'finalizing'
    | 'owned-changed'
    | 'watched-changed'
    | 'requeued'
    | 'retry'
    | 'resync'
    | 'module-reloaded'
    | 'manual';

  /** One reconcile request. */
  export interface Request {
    target: ObjectRef;
    /** The object as JSON, `undefined` when it is gone. */
    object: string | undefined;
    reason: Reason;
    attempt: number;
  }

  /** What `reconcile` answers: done, or come back after some milliseconds. */
  export type Action = { tag: 'done' } | { tag: 'requeue-after'; val: bigint };

  /** How `reconcile` fails: throw `{payload: ReconcileError}`. */
  export interface ReconcileError {
    message: string;
    /** Retry with backoff (true), or wait for the next change (false). */
    retry: boolean;
  }

  /** An API failure, thrown by the `cluster` calls as `{payload: ApiError}`. */
  export interface ApiError {
    code: number;
    reason: string;
    message: string;
  }

  export interface ApplyOptions {
    fieldManager: string | undefined;
    force: boolean;
  }

  export type PatchType =
    | { tag: 'merge' }
    | { tag: 'json' }
    | { tag: 'apply'; val: ApplyOptions };

  export type Propagation = 'background' | 'foreground' | 'orphan';
  export type EventType = 'normal' | 'warning';
  export type Level = 'trace' | 'debug' | 'info' | 'warn' | 'error';

  // Webhooks (the world `operator` and `webhook`).

  export type Operation = 'create' | 'update' | 'delete' | 'connect';
  export type FailurePolicy = 'fail' | 'ignore';

  export interface Webhook {
    name: string;
    kinds: Gvk[];
    operations: Operation[];
    subResources: string[];
    namespaceSelector: string | undefined;
    objectSelector: string | undefined;
    failurePolicy: FailurePolicy;
    timeoutSeconds: number | undefined;
  }

  export interface Conversion {
    kind: Gvk;
    versions: string[];
  }

  export interface Webhooks {
    validating: Webhook[];
    mutating: Webhook[];
    conversions: Conversion[];
  }

  export interface UserInfo {
    username: string;
    uid: string;
    groups: string[];
    extra: [string, string[]][];
  }

  export interface AdmissionRequest {
    uid: string;
    webhook: string;
    kind: Gvk;
    resource: string;
    subResource: string | undefined;
    namespace: string | undefined;
    name: string;
    operation: Operation;
    userInfo: UserInfo;
    object: string | undefined;
    oldObject: string | undefined;
    dryRun: boolean;
    options: string | undefined;
  }

  export interface Verdict {
    allowed: boolean;
    message: string | undefined;
    code: number | undefined;
    warnings: string[];
  }

  export interface Mutation {
    verdict: Verdict;
    /** The mutated object as JSON; `undefined`: unchanged. */
    object: string | undefined;
  }

  export interface ConversionRequest {
    uid: string;
    desiredApiVersion: string;
    objects: string[];
  }

  /** The exports of the world `reconciler`. */
  export interface ReconcilerExports {
    manifest(): Manifest;
    reconcile(request: Request): Action;
    /** (0.4) The CRDs the module ships, each a JSON document. */
    crds(): string[];
  }

  /** The exports of the world `operator`: a reconciler with webhooks. */
  export interface OperatorExports extends ReconcilerExports {
    webhooks(): Webhooks;
    validate(request: AdmissionRequest): Verdict;
    mutate(request: AdmissionRequest): Mutation;
    /** Throws the reason (a string) when it cannot convert. */
    convert(request: ConversionRequest): string[];
  }
}

declare module 'rekon:reconciler/cluster@0.4.0' {
  type ApiError = Rekon.ApiError;
  type Gvk = Rekon.Gvk;
  type ObjectRef = Rekon.ObjectRef;
  type PatchType = Rekon.PatchType;
  type Propagation = Rekon.Propagation;
  type EventType = Rekon.EventType;
  /** Reads one object from the host's cache (JSON); throws `{payload: ApiError}` (404 when absent). */
  export function get(target: ObjectRef): string;
  /** Lists objects from the cache (JSON each). */
  export function list(kind: Gvk, namespace: string | undefined, labelSelector: string | undefined): string[];
  /** Lists the objects an index keys by `value`. */
  export function listByIndex(index: string, value: string, namespace: string | undefined): string[];
  export function create(kind: Gvk, namespace: string | undefined, object: string): string;
  export function replace(target: ObjectRef, object: string): string;
  export function patch(target: ObjectRef, patchType: PatchType, body: string): string;
  export function replaceStatus(target: ObjectRef, object: string): string;
  export function patchStatus(target: ObjectRef, patchType: PatchType, body: string): string;
  export function delete_(target: ObjectRef, propagation: Propagation | undefined): void;
  export { delete_ as delete };
  export function recordEvent(regarding: ObjectRef, eventType: EventType, reason: string, message: string): void;
}

declare module 'rekon:reconciler/log@0.4.0' {
  type Level = Rekon.Level;
  export function log(level: Level, message: string, fields: [string, string][]): void;
}
