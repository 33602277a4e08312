//! The Service strategy, allocation and checks against the real server's
//! answers.

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use serde_json::{Value, json};

use super::*;

#[test]
fn addresses_come_from_above_the_static_band() {
    let ranges = Ranges::new("10.0.0.0/24", (30000, 32767));
    let none = Held::default();
    assert_eq!(
        ranges.free_ip(&Taken::besides(&none, None)).as_deref(),
        Some("10.0.0.17")
    );
    let svc = |ip: &str| json!({"spec": {"clusterIPs": [ip]}});
    let held = Held::of([svc("10.0.0.17"), svc("10.0.0.18"), svc("10.0.0.20")].iter());
    assert_eq!(
        ranges.free_ip(&Taken::besides(&held, None)).as_deref(),
        Some("10.0.0.19")
    );
    // A Service's own address is free for itself.
    let own = svc("10.0.0.17");
    assert_eq!(
        ranges
            .free_ip(&Taken::besides(&held, Some(&own)))
            .as_deref(),
        Some("10.0.0.17")
    );
    assert_eq!(ranges.free_port(&BTreeSet::new()), Some(30086));
    assert_eq!(
        ranges.free_port(&BTreeSet::from([30086, 30087])),
        Some(30088)
    );
    assert!(ranges.contains("10.0.0.254".parse().unwrap()));
    assert!(!ranges.contains("10.0.0.255".parse().unwrap()));
    assert!(!ranges.contains("10.1.0.5".parse().unwrap()));
}

#[test]
fn a_full_dynamic_band_gives_addresses_of_the_static_one_then_none() {
    let ranges = Ranges::new("10.0.0.0/27", (30000, 30015));
    // 30 addresses: a static band of 16 (.1-.16), the rest dynamic.
    let svc =
        |n: u32| json!({"spec": {"clusterIPs": [Ipv4Addr::from(0x0a00_0000 + n).to_string()]}});
    let dynamic: Vec<Value> = (17..=30).map(svc).collect();
    let held = Held::of(dynamic.iter());
    assert_eq!(
        ranges.free_ip(&Taken::besides(&held, None)).as_deref(),
        Some("10.0.0.1")
    );
    let all: Vec<Value> = (1..=30).map(svc).collect();
    let mut held = Held::of(all.iter());
    assert_eq!(ranges.free_ip(&Taken::besides(&held, None)), None);
    held.remove(&svc(25));
    assert_eq!(
        ranges.free_ip(&Taken::besides(&held, None)).as_deref(),
        Some("10.0.0.25")
    );
}

#[test]
fn a_service_is_defaulted_as_the_real_server_does() {
    let mut svc = json!({"metadata": {"name": "a"}, "spec": {"ports": [{"port": 80}]}});
    default(&mut svc);
    allocate(
        &mut svc,
        None,
        &Taken::besides(&Held::default(), None),
        &Ranges::new("10.0.0.0/24", (30000, 32767)),
        false,
    )
    .unwrap();
    assert_eq!(
        svc["spec"],
        json!({"ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}], "sessionAffinity": "None",
            "type": "ClusterIP", "internalTrafficPolicy": "Cluster", "ipFamilyPolicy": "SingleStack",
            "ipFamilies": ["IPv4"], "clusterIP": "10.0.0.17", "clusterIPs": ["10.0.0.17"]})
    );
    assert!(validate(&svc).is_empty());
}
