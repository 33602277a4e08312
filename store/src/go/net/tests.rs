//! Addresses, prefixes and MACs against Go's answers.

use std::net::IpAddr;

use super::*;

/// Go's `netip.ParseAddr` without zones reads what the standard
/// library's parser reads, to the address: strings of the characters
/// addresses are made of, every length up to 10, and some longer ones.
#[test]
fn parse_ip_reads_what_the_standard_library_reads() {
    let alphabet = ['0', '1', '9', 'a', 'f', ':', '.', '%'];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut samples: Vec<String> = vec![
        "::".into(),
        "::1".into(),
        "1::".into(),
        "1:2:3:4:5:6:7::".into(),
        "::1:2:3:4:5:6:7".into(),
        "1:2:3:4:5:6:1.2.3.4".into(),
        "::ffff:1.2.3.4".into(),
        "::1.02.3.4".into(),
        "1:2:3:4:5:6:7:1.2.3.4".into(),
        "255.255.255.255".into(),
        "256.1.1.1".into(),
        "01.2.3.4".into(),
        "fe80::1%eth0".into(),
    ];
    for _ in 0..200_000 {
        let len = (next() % 16) as usize;
        samples.push(
            (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect(),
        );
    }
    for sample in samples {
        assert_eq!(
            parse_ip(&sample),
            sample.parse::<IpAddr>().ok(),
            "{sample:?}"
        );
    }
}

#[test]
fn prefixes_parse_with_go_s_words() {
    assert_eq!(
        parse_prefix("10.0.0.0/8").map(|c| c.text()),
        Ok("10.0.0.0/8".to_string())
    );
    assert_eq!(
        parse_prefix("10.0.0.0/08"),
        Err("netip.ParsePrefix(\"10.0.0.0/08\"): bad bits after slash: \"08\"".into())
    );
    assert_eq!(
        parse_prefix("10.0.0.0"),
        Err("netip.ParsePrefix(\"10.0.0.0\"): no '/'".into())
    );
    let net = parse_cidr_sloppy("010.0.0.0/08").expect("a sloppy CIDR");
    assert_eq!(net.text(), "10.0.0.0/8");
    assert!(net.contains(&"10.1.2.3".parse().expect("an address")));
    assert_eq!(
        mask("10.1.2.3".parse().expect("an address"), 0).to_string(),
        "0.0.0.0"
    );
}

#[test]
fn mac_follows_parse_mac() {
    assert!(is_mac("00:11:22:33:44:55"));
    assert!(is_mac("00-11-22-33-44-55-66-77"));
    assert!(is_mac("0011.2233.4455"));
    assert!(is_mac(&["00"; 20].join(":")));
    assert!(is_mac("ABCDEF012345"));
    assert!(is_mac("1234567890123456"));
    assert!(!is_mac("41111111111111"));
    assert!(!is_mac("ABCDEF01234G"));
    assert!(!is_mac("00:11:22:33:44"));
    assert!(!is_mac("00:11:22:33:44:55:66"));
    assert!(!is_mac("00:11-22:33:44:55"));
    assert!(!is_mac("0g:11:22:33:44:55"));
}
