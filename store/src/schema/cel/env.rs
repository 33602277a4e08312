//! The `cel` environment rules run in: the crate's standard library (with
//! optional types), its strings and lists extensions, and the Kubernetes
//! functions added as custom overloads ([`lib_lists`](super::lib_lists),
//! [`lib_quantity`](super::lib_quantity), [`lib_net`](super::lib_net),
//! [`lib_url`](super::lib_url), [`lib_format`](super::lib_format),
//! [`lib_semver`](super::lib_semver)). Which of them a rule may call is the
//! type checker's business ([`decls`](super::decls)): the crate's extras
//! (`'abc'.reverse()`) are refused there, as the real server refuses them.

use std::sync::{Arc, LazyLock};

use cel::Env;

use super::{comprehensions, lib_format, lib_lists, lib_net, lib_quantity, lib_semver, lib_url};

/// The environment, built once.
pub(crate) static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| {
    let mut env = Env::stdlib();
    env.add_extension(cel::extensions::strings)
        .expect("the strings extension registers once");
    env.add_extension(cel::extensions::lists)
        .expect("the lists extension registers once");
    env.add_extension(comprehensions::register)
        .expect("the two-variable comprehensions register once");
    env.add_extension(lib_lists::register)
        .expect("the list functions are distinct from the crate's");
    env.add_extension(lib_quantity::register)
        .expect("the quantity functions register once");
    env.add_extension(lib_net::register)
        .expect("the IP and CIDR functions register once");
    env.add_extension(lib_url::register)
        .expect("the URL functions register once");
    env.add_extension(lib_format::register)
        .expect("the format functions register once");
    env.add_extension(lib_semver::register)
        .expect("the semver functions register once");
    Arc::new(env)
});
