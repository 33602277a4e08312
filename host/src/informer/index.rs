//! Cache indexes: what a manifest's index keys an object by (the rule is
//! `rekon_rules::index_keys`, shared with the SDK's harness).

use serde_json::Value;

use crate::contract::IndexKey;

/// The cache's form of an index key.
pub(crate) fn spec(key: &IndexKey) -> super::IndexSpec {
    match key {
        IndexKey::Field(path) => super::IndexSpec::Field(path.clone()),
        IndexKey::Label(label) => super::IndexSpec::Label(label.clone()),
    }
}

/// The keys `object` is indexed under.
pub(crate) fn keys(object: &Value, key: &IndexKey) -> Vec<String> {
    rekon_rules::index_keys(object, key.as_rule())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rekon_rules::valid_field_path;
    use serde_json::json;

    #[test]
    fn fields_lists_and_labels_give_their_keys() {
        let pod = json!({"metadata": {"labels": {"app": "web"}},
            "spec": {"nodeName": "node-1", "priority": 5, "secrets": ["a", "b", {"x": 1}]}});
        let field = |p: &str| keys(&pod, &IndexKey::Field(p.into()));
        assert_eq!(field("spec.nodeName"), ["node-1"]);
        assert_eq!(field(".spec.priority"), ["5"]);
        assert_eq!(field("spec.secrets"), ["a", "b"]);
        assert!(field("spec.missing").is_empty());
        assert!(field("spec").is_empty(), "an object is no key");
        assert_eq!(keys(&pod, &IndexKey::Label("app".into())), ["web"]);
        assert!(keys(&pod, &IndexKey::Label("tier".into())).is_empty());
        assert!(valid_field_path("spec.nodeName") && !valid_field_path("spec..x"));
    }
}
