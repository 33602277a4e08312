//! The figures over rounds: each operator's best round, and the report of
//! both with their ratios.

use super::CONCURRENCY;
use super::operator::Figures;
use crate::emit;

/// An operator's CPU seconds per reconcile over the create and update
/// phases.
pub fn per_reconcile(f: &Figures) -> f64 {
    (f.create_cpu_s + f.update_cpu_s) / (f.create_reconciles + f.update_reconciles)
}

/// One operator's figures over its rounds, as the in-memory mode takes
/// them: its cheapest round's CPU figures and its lowest memory (what the
/// operator costs when the machine does not slow it down), its highest idle
/// CPU and slowest deletion, and the Event count furthest from one per App.
pub fn best_of(rounds: &[Figures], apps: usize) -> Figures {
    let cheapest = rounds
        .iter()
        .min_by(|a, b| per_reconcile(a).total_cmp(&per_reconcile(b)))
        .expect("at least one round");
    let lowest = |f: fn(&Figures) -> f64| rounds.iter().map(f).fold(f64::INFINITY, f64::min);
    let highest = |f: fn(&Figures) -> f64| rounds.iter().map(f).fold(0.0, f64::max);
    Figures {
        create_cpu_s: cheapest.create_cpu_s,
        create_reconciles: cheapest.create_reconciles,
        update_cpu_s: cheapest.update_cpu_s,
        update_reconciles: cheapest.update_reconciles,
        idle_cpu_percent: highest(|f| f.idle_cpu_percent),
        idle_rss_mb: lowest(|f| f.idle_rss_mb),
        peak_rss_mb: lowest(|f| f.peak_rss_mb),
        delete_s: highest(|f| f.delete_s),
        cleaned_up_events: rounds
            .iter()
            .map(|f| f.cleaned_up_events)
            .max_by(|a, b| (a - apps as f64).abs().total_cmp(&(b - apps as f64).abs()))
            .unwrap_or(f64::NAN),
    }
}

/// Prints the figures of both operators and their ratios.
pub fn report(apps: usize, wasm: &Figures, kubers: &Figures) {
    let n = apps as f64;
    emit("real_apps", n, "count");
    emit("real_concurrency", CONCURRENCY as f64, "count");
    for (who, f) in [("wasm", wasm), ("kubers", kubers)] {
        let us = |cpu: f64, count: f64| cpu * 1e6 / count;
        emit(
            &format!("real_{who}_create_cpu_us_per_reconcile"),
            us(f.create_cpu_s, f.create_reconciles),
            "us",
        );
        emit(
            &format!("real_{who}_update_cpu_us_per_reconcile"),
            us(f.update_cpu_s, f.update_reconciles),
            "us",
        );
        emit(
            &format!("real_{who}_create_reconciles_per_app"),
            f.create_reconciles / n,
            "count",
        );
        emit(
            &format!("real_{who}_update_reconciles_per_app"),
            f.update_reconciles / n,
            "count",
        );
        emit(
            &format!("real_{who}_cpu_us_per_app"),
            us(f.create_cpu_s + f.update_cpu_s, n),
            "us",
        );
        emit(
            &format!("real_{who}_idle_cpu_percent"),
            f.idle_cpu_percent,
            "%",
        );
        emit(&format!("real_{who}_idle_rss_mb"), f.idle_rss_mb, "MiB");
        emit(&format!("real_{who}_peak_rss_mb"), f.peak_rss_mb, "MiB");
        emit(&format!("real_{who}_delete_seconds"), f.delete_s, "s");
        emit(
            &format!("real_{who}_cleaned_up_events"),
            f.cleaned_up_events,
            "count",
        );
    }
    let per_app = |f: &Figures| f.create_cpu_s + f.update_cpu_s;
    emit(
        "real_wasm_cpu_over_kubers_per_reconcile",
        per_reconcile(wasm) / per_reconcile(kubers),
        "ratio",
    );
    emit(
        "real_wasm_cpu_over_kubers_per_app",
        per_app(wasm) / per_app(kubers),
        "ratio",
    );
    emit(
        "real_idle_rss_over_kubers",
        wasm.idle_rss_mb / kubers.idle_rss_mb,
        "ratio",
    );
    emit(
        "real_peak_rss_over_kubers",
        wasm.peak_rss_mb / kubers.peak_rss_mb,
        "ratio",
    );
}
