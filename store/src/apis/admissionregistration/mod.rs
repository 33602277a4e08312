//! The admissionregistration group (`pkg/apis/admissionregistration`):
//! the webhook configurations' defaults.

pub(crate) mod webhookconfiguration;
