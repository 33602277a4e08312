//! The certificates.k8s.io group (`pkg/apis/certificates`): of its kinds,
//! only what a CertificateSigningRequest is selected by.

pub(crate) mod certificatesigningrequest;
