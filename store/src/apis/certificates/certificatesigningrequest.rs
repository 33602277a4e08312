//! CertificateSigningRequest (certificates.k8s.io/v1): the fields it is
//! selected by. certificates/v1's labels (`pkg/apis/certificates/v1/
//! conversion.go`: its name and `spec.signerName`) and its field set
//! (`SelectableFields` in `pkg/registry/certificates/certificates/strategy.go`).

use crate::apis::strategy::Selectable;
use crate::machinery::object::text_at;
use crate::meta::selector::{Refusal, object_meta_fields};

/// The CertificateSigningRequest's field selectors.
pub(crate) static SELECTABLE: Selectable = Selectable {
    labels: &[
        ("metadata.name", "metadata.name"),
        ("spec.signerName", "spec.signerName"),
    ],
    refusal: Refusal::NotSupported,
    fields: |csr| {
        let mut set = object_meta_fields(csr);
        set.insert(
            "spec.signerName".into(),
            text_at(csr, "/spec/signerName").to_string(),
        );
        set
    },
};
