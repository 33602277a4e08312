//! The batch group (`pkg/apis/batch`): one file per kind, the checks
//! a Job and a CronJob's job template share (`validateJobSpec`), and the
//! field selectors of a Job (`job_selectable.rs`).

pub(crate) mod cronjob;
pub(crate) mod job;
pub(crate) mod job_selectable;
pub(crate) mod jobspec;
