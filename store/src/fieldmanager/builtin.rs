//! The list types of the built-in kinds, as their Go types declare them
//! (`+listType=map`, `+listMapKey=...` in `k8s.io/api`), for server-side
//! apply: a Deployment's containers are merged item by item by `name`, a
//! container's ports by `containerPort` and `protocol` (`TCP` when absent),
//! a Service's ports by `port` and `protocol`. Every other list of a
//! built-in kind is atomic, every map is merged field by field.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::{Value, json};

use super::typed::ListKind;

/// One node of a built-in kind's shape: the fields below it that hold
/// typed lists, and its own list type.
#[derive(Debug, Default)]
pub(crate) struct Node {
    /// The fields of an object node whose shape matters.
    pub(crate) fields: HashMap<&'static str, Node>,
    /// The type of the items of a list node.
    pub(crate) item: Option<Box<Node>>,
    /// How a list node is owned.
    pub(crate) list: Option<ListKind>,
    /// The defaults of its items' key fields.
    pub(crate) key_defaults: Vec<(&'static str, Value)>,
}

impl Node {
    fn object(fields: impl IntoIterator<Item = (&'static str, Node)>) -> Node {
        Node {
            fields: fields.into_iter().collect(),
            ..Node::default()
        }
    }

    fn map_list(keys: &[&str], item: Node) -> Node {
        Node {
            item: Some(Box::new(item)),
            list: Some(ListKind::Map(keys.iter().map(|k| k.to_string()).collect())),
            ..Node::default()
        }
    }

    fn with_key_default(mut self, key: &'static str, value: Value) -> Node {
        self.key_defaults.push((key, value));
        self
    }

    /// The default of the key field `key` of this list's items.
    pub(crate) fn key_default(&self, key: &str) -> Option<Value> {
        self.key_defaults
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.clone())
    }
}

fn by_name(item: Node) -> Node {
    Node::map_list(&["name"], item)
}

fn container() -> Node {
    Node::object([
        (
            "ports",
            Node::map_list(&["containerPort", "protocol"], Node::default())
                .with_key_default("protocol", json!("TCP")),
        ),
        ("env", by_name(Node::default())),
        (
            "volumeMounts",
            Node::map_list(&["mountPath"], Node::default()),
        ),
        (
            "volumeDevices",
            Node::map_list(&["devicePath"], Node::default()),
        ),
        (
            "resources",
            Node::object([("claims", by_name(Node::default()))]),
        ),
    ])
}

fn pod_spec() -> Node {
    Node::object([
        ("containers", by_name(container())),
        ("initContainers", by_name(container())),
        ("ephemeralContainers", by_name(container())),
        ("volumes", by_name(Node::default())),
        ("imagePullSecrets", by_name(Node::default())),
        ("hostAliases", Node::map_list(&["ip"], Node::default())),
        (
            "topologySpreadConstraints",
            Node::map_list(&["topologyKey", "whenUnsatisfiable"], Node::default()),
        ),
        ("schedulingGates", by_name(Node::default())),
        ("resourceClaims", by_name(Node::default())),
    ])
}

fn template() -> Node {
    Node::object([("spec", pod_spec())])
}

fn conditions_by_type() -> Node {
    Node::object([("conditions", Node::map_list(&["type"], Node::default()))])
}

fn with_template() -> Node {
    Node::object([("template", template())])
}

/// The shapes, by `(group, kind)`.
fn shapes() -> &'static [((&'static str, &'static str), Node)] {
    static SHAPES: OnceLock<Vec<((&'static str, &'static str), Node)>> = OnceLock::new();
    SHAPES.get_or_init(|| {
        let mut shapes = Vec::new();
        let mut add = |kind: (&'static str, &'static str), node: Node| shapes.push((kind, node));
        add(
            ("", "Pod"),
            Node::object([
                ("spec", pod_spec()),
                (
                    "status",
                    Node::object([
                        ("conditions", Node::map_list(&["type"], Node::default())),
                        ("podIPs", Node::map_list(&["ip"], Node::default())),
                    ]),
                ),
            ]),
        );
        add(("", "PodTemplate"), with_template());
        add(
            ("", "ReplicationController"),
            Node::object([("spec", with_template())]),
        );
        for kind in ["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"] {
            add(
                ("apps", kind),
                Node::object([("spec", with_template()), ("status", conditions_by_type())]),
            );
        }
        add(("batch", "Job"), Node::object([("spec", with_template())]));
        add(
            ("batch", "CronJob"),
            Node::object([(
                "spec",
                Node::object([("jobTemplate", Node::object([("spec", with_template())]))]),
            )]),
        );
        add(
            ("", "Service"),
            Node::object([(
                "spec",
                Node::object([(
                    "ports",
                    Node::map_list(&["port", "protocol"], Node::default())
                        .with_key_default("protocol", json!("TCP")),
                )]),
            )]),
        );
        add(
            ("", "PersistentVolumeClaim"),
            Node::object([("status", conditions_by_type())]),
        );
        shapes
    })
}

/// The shape of a built-in kind, if its lists are typed.
pub(crate) fn shape(group: &str, kind: &str) -> Option<&'static Node> {
    shapes()
        .iter()
        .find(|((g, k), _)| *g == group && *k == kind)
        .map(|(_, node)| node)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deployments_containers_and_their_ports_are_map_lists() {
        let deployment = shape("apps", "Deployment").unwrap();
        let containers =
            &deployment.fields["spec"].fields["template"].fields["spec"].fields["containers"];
        assert_eq!(containers.list, Some(ListKind::Map(vec!["name".into()])));
        let ports = &containers.item.as_ref().unwrap().fields["ports"];
        assert_eq!(
            ports.list,
            Some(ListKind::Map(vec![
                "containerPort".into(),
                "protocol".into()
            ]))
        );
        assert_eq!(ports.key_default("protocol"), Some(json!("TCP")));
        assert!(shape("", "ConfigMap").is_none());
    }
}
