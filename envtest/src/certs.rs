//! The certificates of a cluster started for tests: a CA, the API
//! server's serving certificate, and the ServiceAccount token keys.

use std::path::Path;

use crate::{EnvtestError, io};

/// Writes the certificates and keys into `d` (`ca.crt`, `ca.key`,
/// `apiserver.crt`, `apiserver.key`, `sa.key`, `sa.pub`); returns the CA
/// as PEM.
pub(crate) fn write(d: &Path) -> Result<String, EnvtestError> {
    let write = |name: &str, text: &str| {
        std::fs::write(d.join(name), text).map_err(io(format!("cannot write {name}")))
    };
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "rekon-envtest-ca");
    ca_params.key_usages = vec![
        rcgen::KeyUsagePurpose::KeyCertSign,
        rcgen::KeyUsagePurpose::CrlSign,
        rcgen::KeyUsagePurpose::DigitalSignature,
    ];
    let ca_key = rcgen::KeyPair::generate()?;
    let ca = ca_params.self_signed(&ca_key)?;
    let mut serving = rcgen::CertificateParams::new(vec![
        "127.0.0.1".to_string(),
        "localhost".to_string(),
        "kubernetes".to_string(),
        "kubernetes.default.svc".to_string(),
    ])?;
    serving
        .distinguished_name
        .push(rcgen::DnType::CommonName, "kube-apiserver");
    serving.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
    let serving_key = rcgen::KeyPair::generate()?;
    let serving = serving.signed_by(&serving_key, &ca, &ca_key)?;
    let sa_key = rcgen::KeyPair::generate()?;
    write("ca.crt", &ca.pem())?;
    write("ca.key", &ca_key.serialize_pem())?;
    write("apiserver.crt", &serving.pem())?;
    write("apiserver.key", &serving_key.serialize_pem())?;
    write("sa.key", &sa_key.serialize_pem())?;
    write("sa.pub", &sa_key.public_key_pem())?;
    Ok(ca.pem())
}
