//! rekon's benchmarks (`cargo bench --bench NAME`): `dispatch`,
//! `languages`, `admission`, `pipeline` (in memory, and against a real
//! API server beside the kube-rs peer in `peers/kubers`) and `reload`. Each
//! prints one JSON object per figure; README's Performance section says
//! what each measures and what it gave. The benchmarks are this package's
//! bench targets; this library is empty.
