//! Container image references as `ParseImageName` reads them, for the
//! pull policy an image gets by default (`SetDefaults_Container`).

/// The pull policy an image gets: `Always` for the `latest` tag (given,
/// or implied by a reference with neither tag nor digest), else
/// `IfNotPresent` (a reference that does not parse included).
pub(crate) fn pull_policy(image: &str) -> &'static str {
    match image_tag(image) {
        Some(tag) if tag == "latest" => "Always",
        _ => "IfNotPresent",
    }
}

/// The tag of a container image reference as `ParseImageName` reads it:
/// `latest` when there is neither tag nor digest; none when the reference
/// does not parse.
fn image_tag(image: &str) -> Option<String> {
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    if digest.is_some_and(|d| !valid_digest(d)) {
        return None;
    }
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let (repository, tag) = match name[last_slash..].rfind(':') {
        Some(i) => (&name[..last_slash + i], Some(&name[last_slash + i + 1..])),
        None => (name, None),
    };
    if !valid_repository(repository) {
        return None;
    }
    match tag {
        Some(tag) if valid_tag(tag) => Some(tag.to_string()),
        Some(_) => None,
        None if digest.is_some() => Some(String::new()),
        None => Some("latest".to_string()),
    }
}

fn valid_digest(digest: &str) -> bool {
    digest.split_once(':').is_some_and(|(algorithm, hex)| {
        !algorithm.is_empty()
            && algorithm
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+.-_".contains(c))
            && hex.len() >= 32
            && hex.chars().all(|c| c.is_ascii_hexdigit())
    })
}

fn valid_tag(tag: &str) -> bool {
    !tag.is_empty()
        && tag.len() <= 128
        && tag.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
        && tag
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

/// A repository: an optional domain (with a `.` or `:`, or `localhost`),
/// then lowercase path components separated by `/`.
fn valid_repository(repository: &str) -> bool {
    if repository.is_empty() || repository.len() > 255 {
        return false;
    }
    let mut parts: Vec<&str> = repository.split('/').collect();
    if parts.len() > 1
        && (parts[0].contains('.')
            || parts[0].contains(':')
            || parts[0] == "localhost"
            || parts[0].chars().any(|c| c.is_ascii_uppercase()))
    {
        let domain = parts.remove(0);
        let (host, port) = match domain.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (domain, None),
        };
        if host.is_empty()
            || !host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
            || port.is_some_and(|p| p.is_empty() || !p.chars().all(|c| c.is_ascii_digit()))
        {
            return false;
        }
    }
    parts.iter().all(|part| valid_path_component(part))
}

/// `[a-z0-9]+` joined by `.`, `_`, `__` or runs of `-`.
fn valid_path_component(part: &str) -> bool {
    let bytes = part.as_bytes();
    if bytes.is_empty()
        || !bytes[0].is_ascii_lowercase() && !bytes[0].is_ascii_digit()
        || !bytes[bytes.len() - 1].is_ascii_lowercase() && !bytes[bytes.len() - 1].is_ascii_digit()
    {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && !(bytes[i].is_ascii_lowercase() || bytes[i].is_ascii_digit()) {
            i += 1;
        }
        let separator = &part[start..i];
        let ok = separator == "."
            || separator == "_"
            || separator == "__"
            || separator.chars().all(|c| c == '-');
        if !ok {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::pull_policy;

    #[test]
    fn the_pull_policy_follows_the_tag() {
        for (image, policy) in [
            ("nginx", "Always"),
            ("nginx:latest", "Always"),
            ("nginx:1.25", "IfNotPresent"),
            ("registry.example.com:5000/team/nginx", "Always"),
            ("registry.example.com:5000/team/nginx:v2", "IfNotPresent"),
            ("localhost/nginx", "Always"),
            (
                "nginx@sha256:0000000000000000000000000000000000000000000000000000000000000000",
                "IfNotPresent",
            ),
            (
                "nginx:latest@sha256:0000000000000000000000000000000000000000000000000000000000000000",
                "Always",
            ),
            ("NGINX", "IfNotPresent"),
            ("", "IfNotPresent"),
            ("nginx:", "IfNotPresent"),
        ] {
            assert_eq!(pull_policy(image), policy, "{image}");
        }
    }
}
