//! Each metric's help text, registered with it.

use prometheus_client::registry::Registry;

/// Every metric's name (after the `rekon_` prefix) and help text.
pub(super) const HELP: [(&str, &str); 30] = [
    (
        "reconciles",
        "Reconciles by module, the version that served them (a canary's for the objects it serves) and result (done, requeue, error, panic, timeout, out_of_memory, stack_overflow, trap)",
    ),
    (
        "reconcile_duration_seconds",
        "Wall time of one reconcile, instantiation and host calls included, by module and the version that served it",
    ),
    (
        "queue_depth",
        "Objects waiting in a module's queue, by priority (high: changes users cause; normal: requeues and retries; low: initial list, resyncs, reloads)",
    ),
    (
        "queue_wait_seconds",
        "Time from an object becoming due to its reconcile starting",
    ),
    ("retries", "Failed reconciles scheduled for a retry"),
    (
        "guest_failures",
        "Guest traps, panics, timeouts, out-of-memory and stack overflows by kind",
    ),
    (
        "host_calls",
        "Host calls made by guests, by verb and result (ok, or the error reason)",
    ),
    (
        "module_info",
        "Loaded module versions (value 1), with their digest",
    ),
    ("module_load_failures", "Modules refused at load, by reason"),
    (
        "candidate_canary_percent",
        "The version tried beside a module's serving one, while it runs: the share of objects (a percentage) it serves live as a canary, 0 for a shadow",
    ),
    (
        "shadow_reconciles",
        "Reconciles of a module's shadow version beside the serving one, its writes dry runs",
    ),
    (
        "shadow_differences",
        "Shadowed reconciles whose writes differ from the serving version's",
    ),
    (
        "shadow_errors",
        "Shadowed reconciles that failed (an error, trap, timeout or the guest's panic)",
    ),
    (
        "shadow_skipped",
        "Requests the shadow did not reconcile: its queue was full (it never slows the serving version)",
    ),
    (
        "shadow_superseded",
        "Shadow reconciles replaced, while waiting, by a newer request for the same object",
    ),
    (
        "canary_reconciles",
        "Reconciles served live by a module's canary (the shadow's share of the objects)",
    ),
    (
        "leader",
        "1 when this replica leads (or runs without election; in scale-out mode, holds at least one module Lease), else 0",
    ),
    (
        "module_leader",
        "1 while a module reconciles on this replica (it leads, holds the module's Lease in scale-out mode, or runs without election), else 0",
    ),
    (
        "informer_objects",
        "Objects in each shared informer's cache",
    ),
    (
        "events",
        "Events recorded by modules and the host, by result (created, aggregated into a series, dropped_refused, dropped_rate_limited, dropped_queue_full, dropped_failed, dropped_not_leading)",
    ),
    (
        "admission_requests",
        "Admission and conversion reviews by module, webhook (`convert` for conversions) and result (allowed, denied, patched, converted, bad_request, or the guest's failure: error, panic, timeout, out_of_memory, stack_overflow, trap, instantiate)",
    ),
    (
        "admission_duration_seconds",
        "Wall time of one review in the host, instantiation and reads included",
    ),
    (
        "shard_fraction",
        "The share of the hash space (0 to 1) whose objects this replica reconciles for sharded modules",
    ),
    (
        "shard_members",
        "Replicas the sharded modules' objects are spread over, as this replica sees them",
    ),
    (
        "shard_objects",
        "A sharded module's objects cached on this replica, by kind (its primaries and the objects they own)",
    ),
    (
        "shard_filtering",
        "1 for how a sharded informer's objects are filtered, by kind and mode (server: the API server's shardSelector; host: here)",
    ),
    (
        "shard_handoffs",
        "Ranges of the hash space taken (gained) or handed over (released) by this replica",
    ),
    (
        "shard_handoff_duration_seconds",
        "Time from a change of the replicas seen to this replica reconciling its new ranges (or having released the old)",
    ),
    (
        "migration_objects",
        "A CRD's storage version migration by this replica: objects written back in the storage version (state migrated) of those the resource holds (state total)",
    ),
    (
        "migrations",
        "Storage version migrations ended by this replica, by CRD and outcome (done, refused: a conversion that does not round-trip, failed: stopped on an object)",
    ),
];

/// Registers `metric` under `name`, with its help from [`HELP`], and
/// returns it.
pub(super) fn register<M>(registry: &mut Registry, name: &str, metric: M) -> M
where
    M: prometheus_client::registry::Metric + Clone,
{
    let help = HELP
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, help)| *help)
        .unwrap_or_else(|| panic!("metric rekon_{name} has no help text in HELP"));
    registry.register(name, help, metric.clone());
    metric
}
