//! Objects as kubectl's imperative commands send them, built as Go's
//! protobuf writes them (every non-pointer field, set or not), against
//! what the same command prints with `--dry-run=client -o json` (kubectl
//! 1.32), less `creationTimestamp: null` and empty statuses.

use k8s_rs_pb::api::{
    apps::v1 as apps, batch::v1 as batch, core::v1 as core, networking::v1 as networking,
    policy::v1 as policy, rbac::v1 as rbac,
};
use k8s_rs_pb::apimachinery::pkg::api::resource::Quantity;
use k8s_rs_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_rs_pb::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::json;

use super::{decode, go_container, go_meta, go_pod_spec, map, some};

fn selector(labels: &[(&str, &str)]) -> protobuf::MessageField<meta::LabelSelector> {
    some(meta::LabelSelector {
        matchLabels: map(labels),
        ..Default::default()
    })
}

fn int(value: i32) -> IntOrString {
    IntOrString {
        type_: Some(0),
        intVal: Some(value),
        strVal: Some(String::new()),
        ..Default::default()
    }
}

fn string(value: &str) -> IntOrString {
    IntOrString {
        type_: Some(1),
        intVal: Some(0),
        strVal: Some(value.into()),
        ..Default::default()
    }
}

#[test]
fn a_deployment_as_kubectl_create_deployment_sends_it() {
    // kubectl create deployment web --image=nginx --replicas=2 --port=80
    let app = [("app", "web")];
    let nginx = core::Container {
        ports: vec![core::ContainerPort {
            name: Some(String::new()),
            hostPort: Some(0),
            containerPort: Some(80),
            protocol: Some(String::new()),
            hostIP: Some(String::new()),
            ..Default::default()
        }],
        ..go_container("nginx", "nginx")
    };
    let deployment = apps::Deployment {
        metadata: go_meta("web", &app),
        spec: some(apps::DeploymentSpec {
            replicas: Some(2),
            selector: selector(&app),
            template: some(core::PodTemplateSpec {
                metadata: go_meta("", &app),
                spec: go_pod_spec(vec![nginx], ""),
                ..Default::default()
            }),
            strategy: some(apps::DeploymentStrategy {
                type_: Some(String::new()),
                ..Default::default()
            }),
            minReadySeconds: Some(0),
            paused: Some(false),
            ..Default::default()
        }),
        status: some(apps::DeploymentStatus {
            observedGeneration: Some(0),
            replicas: Some(0),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_eq!(
        decode("apps/v1", "Deployment", &deployment),
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "nginx", "image": "nginx",
                        "ports": [{"containerPort": 80}], "resources": {}}]}},
                "strategy": {}}})
    );
}

#[test]
fn a_service_target_port_is_a_number_or_a_name() {
    // kubectl create service clusterip web --tcp=80:8080 --tcp=9090:metrics
    let port = |name: &str, port, target| core::ServicePort {
        name: Some(name.into()),
        protocol: Some("TCP".into()),
        port: Some(port),
        targetPort: some(target),
        nodePort: Some(0),
        ..Default::default()
    };
    let service = core::Service {
        metadata: go_meta("web", &[("app", "web")]),
        spec: some(core::ServiceSpec {
            ports: vec![
                port("80-8080", 80, int(8080)),
                port("9090-metrics", 9090, string("metrics")),
            ],
            selector: map(&[("app", "web")]),
            clusterIP: Some(String::new()),
            type_: Some("ClusterIP".into()),
            sessionAffinity: Some(String::new()),
            publishNotReadyAddresses: Some(false),
            ..Default::default()
        }),
        status: some(core::ServiceStatus {
            loadBalancer: some(core::LoadBalancerStatus::default()),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_eq!(
        decode("v1", "Service", &service),
        json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"ports": [
                {"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080},
                {"name": "9090-metrics", "protocol": "TCP", "port": 9090, "targetPort": "metrics"}],
                "selector": {"app": "web"}, "type": "ClusterIP"},
            "status": {"loadBalancer": {}}})
    );
}

#[test]
fn a_resource_quota_keeps_quantities_as_strings() {
    // kubectl create quota q --hard=cpu=1,memory=1Gi
    let quantity = |q: &str| Quantity {
        string: Some(q.into()),
        ..Default::default()
    };
    let quota = core::ResourceQuota {
        metadata: go_meta("q", &[]),
        spec: some(core::ResourceQuotaSpec {
            hard: [("memory", "1Gi"), ("cpu", "1")]
                .into_iter()
                .map(|(k, v)| (k.to_owned(), quantity(v)))
                .collect(),
            ..Default::default()
        }),
        status: some(core::ResourceQuotaStatus::default()),
        ..Default::default()
    };
    assert_eq!(
        decode("v1", "ResourceQuota", &quota),
        json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "q"},
            "spec": {"hard": {"cpu": "1", "memory": "1Gi"}}})
    );
}

#[test]
fn a_cronjob_with_a_schedule_and_a_job_template() {
    // kubectl create cronjob tick --image=busybox --schedule="*/1 * * * *"
    let cronjob = batch::CronJob {
        metadata: go_meta("tick", &[]),
        spec: some(batch::CronJobSpec {
            schedule: Some("*/1 * * * *".into()),
            concurrencyPolicy: Some(String::new()),
            jobTemplate: some(batch::JobTemplateSpec {
                metadata: go_meta("tick", &[]),
                spec: some(batch::JobSpec {
                    template: some(core::PodTemplateSpec {
                        metadata: go_meta("", &[]),
                        spec: go_pod_spec(vec![go_container("tick", "busybox")], "OnFailure"),
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }),
        status: some(batch::CronJobStatus::default()),
        ..Default::default()
    };
    assert_eq!(
        decode("batch/v1", "CronJob", &cronjob),
        json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "tick"},
            "spec": {"schedule": "*/1 * * * *", "jobTemplate": {"metadata": {"name": "tick"},
                "spec": {"template": {"metadata": {}, "spec": {
                    "containers": [{"name": "tick", "image": "busybox", "resources": {}}],
                    "restartPolicy": "OnFailure"}}}}}})
    );
}

#[test]
fn a_role_keeps_the_core_group_as_an_empty_string() {
    // kubectl create role reader --verb=get,list --resource=pods,deployments.apps
    let rule = |group: &str, resource: &str| rbac::PolicyRule {
        verbs: vec!["get".into(), "list".into()],
        apiGroups: vec![group.into()],
        resources: vec![resource.into()],
        ..Default::default()
    };
    let role = rbac::Role {
        metadata: go_meta("reader", &[]),
        rules: vec![rule("", "pods"), rule("apps", "deployments")],
        ..Default::default()
    };
    assert_eq!(
        decode("rbac.authorization.k8s.io/v1", "Role", &role),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "reader"},
            "rules": [
                {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]},
                {"verbs": ["get", "list"], "apiGroups": ["apps"], "resources": ["deployments"]}]})
    );
}

#[test]
fn a_pod_disruption_budget_min_available_as_int_or_string() {
    // kubectl create pdb web --selector=app=web --min-available=1; its
    // status of zeros, which kubectl's JSON writes, is left out.
    let pdb = |min_available| policy::PodDisruptionBudget {
        metadata: go_meta("web", &[]),
        spec: some(policy::PodDisruptionBudgetSpec {
            minAvailable: some(min_available),
            selector: selector(&[("app", "web")]),
            ..Default::default()
        }),
        status: some(policy::PodDisruptionBudgetStatus {
            observedGeneration: Some(0),
            disruptionsAllowed: Some(0),
            currentHealthy: Some(0),
            desiredHealthy: Some(0),
            expectedPods: Some(0),
            ..Default::default()
        }),
        ..Default::default()
    };
    let expected = |min_available| {
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "web"},
            "spec": {"minAvailable": min_available, "selector": {"matchLabels": {"app": "web"}}}})
    };
    let decoded = decode("policy/v1", "PodDisruptionBudget", &pdb(int(1)));
    assert_eq!(decoded, expected(json!(1)));
    let decoded = decode("policy/v1", "PodDisruptionBudget", &pdb(string("50%")));
    assert_eq!(decoded, expected(json!("50%")));
}

#[test]
fn an_ingress_rule_holds_its_http_paths_inline() {
    // kubectl create ingress simple --rule="foo.com/bar=svc1:8080"
    let path = networking::HTTPIngressPath {
        path: Some("/bar".into()),
        pathType: Some("Exact".into()),
        backend: some(networking::IngressBackend {
            service: some(networking::IngressServiceBackend {
                name: Some("svc1".into()),
                port: some(networking::ServiceBackendPort {
                    name: Some(String::new()),
                    number: Some(8080),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let ingress = networking::Ingress {
        metadata: go_meta("simple", &[]),
        spec: some(networking::IngressSpec {
            rules: vec![networking::IngressRule {
                host: Some("foo.com".into()),
                ingressRuleValue: some(networking::IngressRuleValue {
                    http: some(networking::HTTPIngressRuleValue {
                        paths: vec![path],
                        ..Default::default()
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        }),
        status: some(networking::IngressStatus {
            loadBalancer: some(networking::IngressLoadBalancerStatus::default()),
            ..Default::default()
        }),
        ..Default::default()
    };
    assert_eq!(
        decode("networking.k8s.io/v1", "Ingress", &ingress),
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "simple"},
            "spec": {"rules": [{"host": "foo.com", "http": {"paths": [{"path": "/bar",
                "pathType": "Exact",
                "backend": {"service": {"name": "svc1", "port": {"number": 8080}}}}]}}]},
            "status": {"loadBalancer": {}}})
    );
}
