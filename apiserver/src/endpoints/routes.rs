//! Paths to routes: discovery, OpenAPI, and resources with their namespace, name and subresource.

use rekon_store::{ResourceInfo, Store};

/// What a request addresses.
// One per request, built and matched at once: its size does not matter.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Route {
    Version,
    Api,
    Apis,
    Group(String),
    ResourceList(String, String),
    OpenApiRoot,
    OpenApiDoc(String, String),
    Health,
    Resource {
        res: ResourceInfo,
        namespace: Option<String>,
        name: Option<String>,
        sub: Option<String>,
    },
    UnknownResource,
    /// A subresource a custom resource does not have: its CRD's handler
    /// answers that the object is not found.
    NoSuchSubresource(ResourceInfo, String),
    NotFound,
}

/// The route of a path.
pub(crate) fn route(store: &Store, path: &str) -> Route {
    let segs: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    match segs.as_slice() {
        ["version"] => Route::Version,
        ["healthz" | "readyz" | "livez", ..] => Route::Health,
        ["api"] => Route::Api,
        ["apis"] => Route::Apis,
        ["openapi", "v3"] => Route::OpenApiRoot,
        ["openapi", "v3", "api", v] => Route::OpenApiDoc(String::new(), (*v).to_string()),
        ["openapi", "v3", "apis", g, v] => Route::OpenApiDoc((*g).to_string(), (*v).to_string()),
        ["apis", g] => Route::Group((*g).to_string()),
        ["api", v, rest @ ..] => resource_route(store, "", v, rest),
        ["apis", g, v, rest @ ..] => resource_route(store, g, v, rest),
        _ => Route::NotFound,
    }
}

/// The route of a path under a group-version: its resource list, or a
/// resource with its namespace, name and subresource.
fn resource_route(store: &Store, group: &str, version: &str, rest: &[&str]) -> Route {
    if !store.serves_group_version(group, version) {
        return Route::NotFound;
    }
    let find = |plural: &str| store.resource_for_plural(group, version, plural);
    let (ns, plural, name, sub) = match rest {
        [] => return Route::ResourceList(group.into(), version.into()),
        ["namespaces", ns, plural, tail @ ..]
            if group.is_empty() && !matches!(*plural, "status" | "finalize")
                || !group.is_empty() =>
        {
            match tail {
                [] => (Some(*ns), *plural, None, None),
                [name] => (Some(*ns), *plural, Some(*name), None),
                [name, sub] => (Some(*ns), *plural, Some(*name), Some(*sub)),
                _ => return Route::UnknownResource,
            }
        }
        [plural] => (None, *plural, None, None),
        [plural, name] => (None, *plural, Some(*name), None),
        [plural, name, sub] => (None, *plural, Some(*name), Some(*sub)),
        _ => return Route::UnknownResource,
    };
    let Some(res) = find(plural) else {
        // A group-version only CRDs serve answers an unknown resource as
        // apiextensions' handler does: the plain 404 of a path nobody
        // serves.
        let only_custom = store
            .resources()
            .iter()
            .filter(|r| r.group == group && r.version == version)
            .all(|r| r.custom.is_some());
        return if !group.is_empty() && only_custom {
            Route::NotFound
        } else {
            Route::UnknownResource
        };
    };
    if ns.is_some() && !res.namespaced {
        return Route::UnknownResource;
    }
    if let Some(s) = sub
        && !(s == "status" && res.status_subresource)
        && !(s == "finalize" && res.plural == "namespaces")
        && !res
            .subresources
            .iter()
            .any(|r| r.name == s && SERVED_SUBRESOURCES.contains(&s))
    {
        return match (&res.custom, name) {
            (Some(_), Some(name)) => Route::NoSuchSubresource(res, name.to_string()),
            _ => Route::UnknownResource,
        };
    }
    Route::Resource {
        res,
        namespace: ns.map(str::to_string),
        name: name.map(str::to_string),
        sub: sub.map(str::to_string),
    }
}

/// The subresources served besides `status` (and a Namespace's
/// `finalize`), where a kind lists them: `scale`, and a Pod's eviction,
/// binding, ephemeral containers, resize and log.
const SERVED_SUBRESOURCES: [&str; 6] = [
    "scale",
    "eviction",
    "binding",
    "ephemeralcontainers",
    "resize",
    "log",
];
