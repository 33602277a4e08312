//! The batch group (`pkg/apis/batch`): one file per kind, and the checks
//! a Job and a CronJob's job template share (`validateJobSpec`).

pub(crate) mod cronjob;
pub(crate) mod job;
pub(crate) mod jobspec;
