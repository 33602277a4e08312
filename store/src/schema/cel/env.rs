//! The `cel` environment rules run in: the crate's standard library (with
//! optional types), its strings and lists extensions, and the Kubernetes
//! functions added as custom overloads (one file per library in
//! [`library`](super::library)). Which of them a rule may call is the
//! type checker's business ([`decls`](super::decls)): the crate's extras
//! (`'abc'.reverse()`) are refused there, as the real server refuses them.

use std::sync::{Arc, LazyLock};

use cel::Env;

use super::library::{cidr, comprehensions, ext, format, ip, lists, quantity, regex, semver, urls};

/// The environment, built once.
pub(crate) static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| {
    let mut env = Env::stdlib();
    env.add_extension(cel::extensions::strings)
        .expect("the strings extension registers once");
    env.add_extension(cel::extensions::lists)
        .expect("the lists extension registers once");
    env.add_extension(comprehensions::register)
        .expect("the two-variable comprehensions register once");
    env.add_extension(lists::register)
        .expect("the list functions are distinct from the crate's");
    env.add_extension(regex::register)
        .expect("the regex functions register once");
    env.add_extension(ext::register)
        .expect("the set and optional list functions register once");
    env.add_extension(quantity::register)
        .expect("the quantity functions register once");
    env.add_extension(ip::register)
        .expect("the IP functions register once");
    env.add_extension(cidr::register)
        .expect("the CIDR functions register once");
    env.add_extension(urls::register)
        .expect("the URL functions register once");
    env.add_extension(format::register)
        .expect("the format functions register once");
    env.add_extension(semver::register)
        .expect("the semver functions register once");
    Arc::new(env)
});
