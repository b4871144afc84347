//! The `tls` provider (hashicorp/tls): `tls_private_key` and the
//! `tls_public_key` data source (`key.rs`), self-signed certificates
//! requests and certificates a local CA signs (`cert.rs`), and the
//! `tls_certificate` data source (`certificate.rs`).

mod cert;
mod certificate;
mod key;

use crate::common::{exactly_one_of, failed, invalid, number, string, with};
use crate::provider::{DataSource, Provider, Resource};
use async_trait::async_trait;
use key::{Curve, PrivateKey, PublicKey};
use strata_provider::{AttributeSchema, DriverError, Problem, ResourceSchema};
use strata_value::types::Type;
use strata_value::value::Value;

pub(crate) fn provider() -> Provider {
    Provider::new("tls", "hashicorp/tls")
        .resource("tls_private_key", TlsPrivateKey)
        .resource("tls_self_signed_cert", cert::SelfSignedCert)
        .resource("tls_cert_request", cert::CertRequest)
        .resource("tls_locally_signed_cert", cert::LocallySignedCert)
        .data_source("tls_public_key", TlsPublicKey)
        .data_source("tls_certificate", certificate::TlsCertificate)
}

const ALGORITHMS: [&str; 3] = ["RSA", "ECDSA", "ED25519"];

fn one_of(name: &str, value: Option<String>, allowed: &[&str]) -> Option<Problem> {
    let v = value?;
    (!allowed.contains(&v.as_str())).then(|| {
        invalid(
            name,
            format!("Attribute {name} value must be one of: {allowed:?}, got: {v:?}"),
        )
    })
}

fn strings_of(pairs: Vec<(&'static str, String)>) -> Vec<(&'static str, Value)> {
    pairs
        .into_iter()
        .map(|(k, v)| (k, Value::string(v)))
        .collect()
}

struct TlsPrivateKey;

#[async_trait]
impl Resource for TlsPrivateKey {
    fn schema(&self) -> ResourceSchema {
        let secret = |d| AttributeSchema::computed(Type::String, d).sensitive();
        let public = |d| AttributeSchema::computed(Type::String, d);
        ResourceSchema {
            version: 1,
            ..ResourceSchema::of_attributes(vec![
                (
                    "algorithm",
                    AttributeSchema::required(Type::String, "RSA, ECDSA or ED25519.").force_new(),
                ),
                (
                    "rsa_bits",
                    AttributeSchema::optional(Type::Number, "RSA key size (default 2048).")
                        .and_computed()
                        .force_new(),
                ),
                (
                    "ecdsa_curve",
                    AttributeSchema::optional(Type::String, "ECDSA curve (default P224).")
                        .and_computed()
                        .force_new(),
                ),
                ("private_key_pem", secret("The key, PEM.")),
                ("private_key_openssh", secret("The key, OpenSSH's format.")),
                ("private_key_pem_pkcs8", secret("The key, PKCS#8 PEM.")),
                ("public_key_pem", public("The public key, PEM.")),
                (
                    "public_key_openssh",
                    public("The public key, authorized_keys form."),
                ),
                (
                    "public_key_fingerprint_md5",
                    public("MD5 fingerprint of the SSH key."),
                ),
                (
                    "public_key_fingerprint_sha256",
                    public("SHA256 fingerprint of the SSH key."),
                ),
                ("id", public("SHA-1 of the public key.")),
            ])
        }
    }

    fn defaults(&self) -> Vec<(&'static str, Value)> {
        vec![
            ("rsa_bits", Value::int(2048)),
            ("ecdsa_curve", Value::string("P224")),
        ]
    }

    fn validate(&self, config: &Value) -> Vec<Problem> {
        let mut out: Vec<Problem> = [
            one_of("algorithm", string(config, "algorithm"), &ALGORITHMS),
            one_of("ecdsa_curve", string(config, "ecdsa_curve"), &Curve::NAMES),
        ]
        .into_iter()
        .flatten()
        .collect();
        if let Some(bits) =
            number(config, "rsa_bits").filter(|b| ![2048, 3072, 4096, 8192].contains(b))
        {
            out.push(invalid("rsa_bits", format!("strata's built-in tls provider makes RSA keys of 2048, 3072, 4096 or 8192 bits, not {bits}")));
        }
        out
    }

    async fn create(&self, planned: &Value) -> Result<Value, DriverError> {
        let fail = |e: String| failed("tls_private_key", "create", e);
        let key = PrivateKey::generate(
            &string(planned, "algorithm").unwrap_or_default(),
            number(planned, "rsa_bits").unwrap_or(2048),
            &string(planned, "ecdsa_curve").unwrap_or_else(|| "P224".to_string()),
        )
        .map_err(fail)?;
        let mut pairs = vec![
            ("private_key_pem", key.pem().map_err(fail)?),
            ("private_key_pem_pkcs8", key.pkcs8_pem().map_err(fail)?),
            ("private_key_openssh", key.openssh().map_err(fail)?),
        ];
        pairs.extend(key.public().map_err(fail)?.attributes());
        Ok(with(planned, strings_of(pairs)))
    }
}

struct TlsPublicKey;

#[async_trait]
impl DataSource for TlsPublicKey {
    fn schema(&self) -> ResourceSchema {
        let input = |d| AttributeSchema::optional(Type::String, d).sensitive();
        let out = |d| AttributeSchema::computed(Type::String, d);
        ResourceSchema::of_attributes(vec![
            ("private_key_pem", input("A private key, PEM.")),
            (
                "private_key_openssh",
                input("A private key, OpenSSH's format."),
            ),
            ("algorithm", out("RSA, ECDSA or ED25519.")),
            ("public_key_pem", out("The public key, PEM.")),
            (
                "public_key_openssh",
                out("The public key, authorized_keys form."),
            ),
            (
                "public_key_fingerprint_md5",
                out("MD5 fingerprint of the SSH key."),
            ),
            (
                "public_key_fingerprint_sha256",
                out("SHA256 fingerprint of the SSH key."),
            ),
            ("id", out("SHA-1 of the public key.")),
        ])
    }

    fn validate(&self, config: &Value) -> Vec<Problem> {
        let keys = ["private_key_pem", "private_key_openssh"];
        exactly_one_of(config, &keys, "private_key_pem")
            .into_iter()
            .collect()
    }

    async fn read(&self, config: &Value) -> Result<Value, DriverError> {
        let fail = |e: String| failed("tls_public_key", "read", e);
        let public: PublicKey = match string(config, "private_key_pem") {
            Some(text) => PrivateKey::from_pem(&text).and_then(|k| k.public()),
            None => PublicKey::from_openssh_private(
                &string(config, "private_key_openssh").unwrap_or_default(),
            ),
        }
        .map_err(fail)?;
        let mut pairs = public.attributes();
        pairs.push(("algorithm", public.algorithm().to_string()));
        Ok(with(config, strings_of(pairs)))
    }
}
