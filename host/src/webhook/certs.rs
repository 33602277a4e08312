//! The webhook server's certificate: a self-signed CA and a serving
//! certificate signed by it, kept in a Secret so every replica serves the
//! same one (the first replica creates it, the others read it); or a
//! certificate brought by the operator (a mounted `kubernetes.io/tls`
//! Secret, such as cert-manager writes), read from a directory.

use std::path::Path;

use base64::Engine as _;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

/// Why the webhook server has no certificate.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    /// Generating the CA or the serving certificate failed.
    #[error("cannot generate the webhook certificate")]
    Generate(#[from] rcgen::Error),
    /// The Secret could not be read or created.
    #[error("cannot read or create the Secret {namespace}/{name}")]
    Secret {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// Why.
        #[source]
        source: kube::Error,
    },
    /// A file of the certificate directory is missing or unreadable.
    #[error("cannot read {path}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The PEM text holds no certificate or key, or rustls refuses them.
    #[error("the webhook certificate is unusable: {0}")]
    Invalid(String),
}

/// A serving certificate and what clients verify it with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServingCert {
    /// The certificate chain, PEM.
    pub cert_pem: String,
    /// The private key, PEM.
    pub key_pem: String,
    /// The CA that signed it, PEM: the `caBundle` of the webhook
    /// configurations (empty when the operator's CA is injected otherwise).
    pub ca_pem: String,
}

impl ServingCert {
    /// A new CA and a serving certificate for `names` (DNS names or IP
    /// addresses) signed by it, both without expiry (rcgen's default
    /// validity): they live as long as their Secret.
    pub fn self_signed(names: &[String]) -> Result<ServingCert, CertError> {
        let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new())?;
        ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "rekon webhook CA");
        ca_params.key_usages = vec![
            rcgen::KeyUsagePurpose::KeyCertSign,
            rcgen::KeyUsagePurpose::CrlSign,
        ];
        let ca_key = rcgen::KeyPair::generate()?;
        let ca = ca_params.self_signed(&ca_key)?;

        let mut params = rcgen::CertificateParams::new(names.to_vec())?;
        params.distinguished_name.push(
            rcgen::DnType::CommonName,
            names.first().cloned().unwrap_or_default(),
        );
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        let key = rcgen::KeyPair::generate()?;
        let cert = params.signed_by(&key, &ca, &ca_key)?;
        Ok(ServingCert {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            ca_pem: ca.pem(),
        })
    }

    /// The certificate of a mounted `kubernetes.io/tls` Secret: `tls.crt`,
    /// `tls.key` and, if present, `ca.crt` in `dir`.
    pub fn from_dir(dir: &Path) -> Result<ServingCert, CertError> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read_to_string(&path).map_err(|source| CertError::Read {
                path: path.display().to_string(),
                source,
            })
        };
        Ok(ServingCert {
            cert_pem: read("tls.crt")?,
            key_pem: read("tls.key")?,
            ca_pem: read("ca.crt").unwrap_or_default(),
        })
    }

    /// The certificate kept in the Secret `namespace/name`: read if it
    /// exists, else made for `names` and created. When two replicas race,
    /// the one whose create fails reads the other's.
    pub async fn in_secret(
        client: kube::Client,
        namespace: &str,
        name: &str,
        names: &[String],
    ) -> Result<ServingCert, CertError> {
        let api: Api<Secret> = Api::namespaced(client, namespace);
        let err = |source| CertError::Secret {
            namespace: namespace.to_string(),
            name: name.to_string(),
            source,
        };
        if let Some(secret) = api.get_opt(name).await.map_err(err)?
            && let Some(cert) = from_secret(&secret)
        {
            return Ok(cert);
        }
        let cert = ServingCert::self_signed(names)?;
        let secret = to_secret(name, &cert);
        match api.create(&PostParams::default(), &secret).await {
            Ok(_) => Ok(cert),
            Err(kube::Error::Api(status)) if status.code == 409 => {
                let secret = api.get(name).await.map_err(err)?;
                from_secret(&secret).ok_or_else(|| {
                    CertError::Invalid(format!(
                        "the Secret {namespace}/{name} lacks tls.crt, tls.key or ca.crt"
                    ))
                })
            }
            Err(e) => Err(err(e)),
        }
    }

    /// The `caBundle` of a webhook configuration: the CA, base64.
    pub fn ca_bundle(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.ca_pem)
    }

    /// A rustls server configuration serving this certificate (HTTP/2 and
    /// HTTP/1.1, as kube-apiserver may use either).
    pub fn server_config(&self) -> Result<rustls::ServerConfig, CertError> {
        let chain: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(self.cert_pem.as_bytes())
                .collect::<Result<_, _>>()
                .map_err(|e| CertError::Invalid(format!("tls.crt: {e}")))?;
        if chain.is_empty() {
            return Err(CertError::Invalid("tls.crt holds no certificate".into()));
        }
        let key = PrivateKeyDer::from_pem_slice(self.key_pem.as_bytes())
            .map_err(|e| CertError::Invalid(format!("tls.key: {e}")))?;
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| CertError::Invalid(e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| CertError::Invalid(e.to_string()))?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(config)
    }
}

fn from_secret(secret: &Secret) -> Option<ServingCert> {
    let data = secret.data.as_ref()?;
    let text = |key: &str| {
        data.get(key)
            .and_then(|b| String::from_utf8(b.0.clone()).ok())
            .filter(|t| !t.is_empty())
    };
    Some(ServingCert {
        cert_pem: text("tls.crt")?,
        key_pem: text("tls.key")?,
        ca_pem: text("ca.crt")?,
    })
}

fn to_secret(name: &str, cert: &ServingCert) -> Secret {
    let bytes = |text: &str| ByteString(text.as_bytes().to_vec());
    Secret {
        metadata: kube::api::ObjectMeta {
            name: Some(name.to_string()),
            labels: Some(
                [(
                    "app.kubernetes.io/managed-by".to_string(),
                    "rekon".to_string(),
                )]
                .into(),
            ),
            ..Default::default()
        },
        type_: Some("kubernetes.io/tls".to_string()),
        data: Some(
            [
                ("tls.crt".to_string(), bytes(&cert.cert_pem)),
                ("tls.key".to_string(), bytes(&cert.key_pem)),
                ("ca.crt".to_string(), bytes(&cert.ca_pem)),
            ]
            .into(),
        ),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_self_signed_certificate_serves_and_round_trips_through_a_secret() {
        let cert = ServingCert::self_signed(&["rekon.rekon-system.svc".into(), "127.0.0.1".into()])
            .unwrap();
        assert!(cert.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(cert.server_config().is_ok());
        let secret = to_secret("rekon-webhook-tls", &cert);
        assert_eq!(from_secret(&secret), Some(cert.clone()));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tls.crt"), &cert.cert_pem).unwrap();
        std::fs::write(dir.path().join("tls.key"), &cert.key_pem).unwrap();
        let mounted = ServingCert::from_dir(dir.path()).unwrap();
        assert_eq!(mounted.ca_pem, "", "no ca.crt mounted");
        assert!(mounted.server_config().is_ok());
        let broken = ServingCert {
            key_pem: "nonsense".into(),
            ..cert
        };
        assert!(broken.server_config().is_err());
    }
}
