//! ServiceAccount (v1): a DNS subdomain name, nothing else checked and
//! nothing defaulted (`ValidateServiceAccount`).

use crate::apis::strategy::{Rules, no_defaults, nothing, nothing_on_update};
use crate::machinery::names::name_is_dns_subdomain;

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default: no_defaults,
    validate: nothing,
    validate_update: nothing_on_update,
    validate_status: None,
};
