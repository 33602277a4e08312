//! The batch group (`pkg/apis/batch`): one file per kind, the checks
//! a Job and a CronJob's job template share (`validateJobSpec`), the
//! field selectors of a Job (`job_selectable.rs`), what a new Job gets
//! (`job_create.rs`) and the checks of its status writes (`job_status.rs`).

pub(crate) mod cronjob;
pub(crate) mod job;
pub(crate) mod job_create;
pub(crate) mod job_selectable;
mod job_status;
pub(crate) mod jobspec;
