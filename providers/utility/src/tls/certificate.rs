//! The `tls_certificate` data source: the certificates of a PEM text, or
//! the chain a server presents at an `https://` or `tls://` URL (root-most
//! first, as the provider lists them; the chain checked against the
//! system's roots unless `verify_chain = false`), each described in Go's
//! words (`SHA256-RSA`, `CN=example.com,O=Example`).

use super::key::{pem, pem_block};
use crate::common::{boolean, exactly_one_of, failed, get, hex, invalid, string, with};
use crate::provider::DataSource;
use async_trait::async_trait;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use sha1::Digest;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use strata_provider::{AttributeSchema, DriverError, Problem, ResourceSchema};
use strata_value::types::Type;
use strata_value::value::{Attrs, Value};
use x509_parser::prelude::*;

pub(crate) struct TlsCertificate;

fn read_failed(detail: String) -> DriverError {
    failed("tls_certificate", "read", detail)
}

/// The attribute types of one certificate's object.
fn certificate_type() -> Type {
    let s = |n: &str| (n.to_string(), Type::String);
    Type::object(BTreeMap::from([
        s("signature_algorithm"),
        s("public_key_algorithm"),
        s("serial_number"),
        ("is_ca".to_string(), Type::Bool),
        ("max_path_length".to_string(), Type::Number),
        ("version".to_string(), Type::Number),
        s("issuer"),
        s("subject"),
        s("not_before"),
        s("not_after"),
        s("sha1_fingerprint"),
        s("cert_pem"),
    ]))
}

/// Go's `SignatureAlgorithm.String()` for an OID.
fn signature_name(oid: &str) -> String {
    match oid {
        "1.2.840.113549.1.1.5" => "SHA1-RSA",
        "1.2.840.113549.1.1.4" => "MD5-RSA",
        "1.2.840.113549.1.1.11" => "SHA256-RSA",
        "1.2.840.113549.1.1.12" => "SHA384-RSA",
        "1.2.840.113549.1.1.13" => "SHA512-RSA",
        "1.2.840.113549.1.1.10" => "SHA256-RSAPSS",
        "1.2.840.10045.4.1" => "ECDSA-SHA1",
        "1.2.840.10045.4.3.2" => "ECDSA-SHA256",
        "1.2.840.10045.4.3.3" => "ECDSA-SHA384",
        "1.2.840.10045.4.3.4" => "ECDSA-SHA512",
        "1.3.101.112" => "Ed25519",
        "1.2.840.10040.4.3" => "DSA-SHA1",
        _ => return "0".to_string(),
    }
    .to_string()
}

/// Go's `PublicKeyAlgorithm.String()` for an OID.
fn public_key_name(oid: &str) -> &'static str {
    match oid {
        "1.2.840.113549.1.1.1" => "RSA",
        "1.2.840.10045.2.1" => "ECDSA",
        "1.3.101.112" => "Ed25519",
        "1.2.840.10040.4.1" => "DSA",
        _ => "0",
    }
}

/// RFC 2253 escaping, as Go's `pkix.Name.String()` writes values.
fn escape(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    let last = v.chars().count().saturating_sub(1);
    for (i, c) in v.chars().enumerate() {
        let special = matches!(c, ',' | '+' | '"' | '\\' | '<' | '>' | ';')
            || (i == 0 && (c == ' ' || c == '#'))
            || (i == last && c == ' ');
        if special {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A name as Go's `pkix.Name.String()` writes it: the RDNs last first,
/// known attributes by their short names, others as `OID=#hex`.
fn name_text(name: &X509Name<'_>) -> String {
    let rdns: Vec<String> = name
        .iter()
        .map(|rdn| {
            rdn.iter()
                .map(|atv| {
                    let oid = atv.attr_type().to_id_string();
                    let short = match oid.as_str() {
                        "2.5.4.6" => "C",
                        "2.5.4.10" => "O",
                        "2.5.4.11" => "OU",
                        "2.5.4.3" => "CN",
                        "2.5.4.5" => "SERIALNUMBER",
                        "2.5.4.7" => "L",
                        "2.5.4.8" => "ST",
                        "2.5.4.9" => "STREET",
                        "2.5.4.17" => "POSTALCODE",
                        _ => "",
                    };
                    match (short, atv.as_str()) {
                        ("", _) | (_, Err(_)) => {
                            format!("{oid}=#{}", hex(atv.attr_value().data))
                        }
                        (s, Ok(v)) => format!("{s}={}", escape(v)),
                    }
                })
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect();
    rdns.into_iter().rev().collect::<Vec<_>>().join(",")
}

fn rfc3339(t: ASN1Time) -> String {
    let t = t.to_datetime();
    t.format(&::time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}

/// One certificate as the provider describes it.
fn describe(der: &[u8]) -> Result<Value, String> {
    let (_, cert) =
        parse_x509_certificate(der).map_err(|e| format!("Unable to parse certificate: {e}"))?;
    let constraints = cert.basic_constraints().ok().flatten().map(|b| b.value);
    let is_ca = constraints.is_some_and(|b| b.ca);
    let max_path = match constraints {
        Some(b) => b.path_len_constraint.map_or(-1, i64::from),
        None => 0,
    };
    let mut attrs = Attrs::new();
    let mut put = |k: &str, v: Value| {
        attrs.insert(k.to_string(), v);
    };
    put(
        "signature_algorithm",
        Value::string(signature_name(
            &cert.signature_algorithm.algorithm.to_id_string(),
        )),
    );
    put(
        "public_key_algorithm",
        Value::string(public_key_name(
            &cert.public_key().algorithm.algorithm.to_id_string(),
        )),
    );
    put("serial_number", Value::string(cert.serial.to_string()));
    put("is_ca", Value::Bool(is_ca));
    put("max_path_length", Value::int(max_path));
    put("version", Value::int(i64::from(cert.version().0) + 1));
    put("issuer", Value::string(name_text(cert.issuer())));
    put("subject", Value::string(name_text(cert.subject())));
    put(
        "not_before",
        Value::string(rfc3339(cert.validity().not_before)),
    );
    put(
        "not_after",
        Value::string(rfc3339(cert.validity().not_after)),
    );
    put(
        "sha1_fingerprint",
        Value::string(hex(&sha1::Sha1::digest(der))),
    );
    put("cert_pem", Value::string(pem("CERTIFICATE", der)));
    Ok(Value::Object(attrs))
}

/// Keeps the chain a server presents, checking it first when asked.
#[derive(Debug)]
struct Recorder {
    check: Option<Arc<rustls::client::WebPkiServerVerifier>>,
    provider: Arc<rustls::crypto::CryptoProvider>,
    chain: Mutex<Vec<Vec<u8>>>,
}

impl ServerCertVerifier for Recorder {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(check) = &self.check {
            check.verify_server_cert(end_entity, intermediates, server_name, ocsp, now)?;
        }
        if let Ok(mut chain) = self.chain.lock() {
            *chain = std::iter::once(end_entity)
                .chain(intermediates)
                .map(|c| c.as_ref().to_vec())
                .collect();
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The chain `host:port` presents, leaf first.
fn fetch_chain(host: &str, port: u16, verify: bool) -> Result<Vec<Vec<u8>>, String> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let check = if verify {
        let mut roots = rustls::RootCertStore::empty();
        for c in rustls_native_certs::load_native_certs().certs {
            let _ = roots.add(c);
        }
        let v = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            provider.clone(),
        )
        .build()
        .map_err(|e| format!("no system roots to verify the chain with: {e}"))?;
        Some(v)
    } else {
        None
    };
    let recorder = Arc::new(Recorder {
        check,
        provider: provider.clone(),
        chain: Mutex::new(Vec::new()),
    });
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(recorder.clone())
        .with_no_client_auth();
    let name = ServerName::try_from(host.to_string())
        .map_err(|e| format!("invalid host {host:?}: {e}"))?;
    let mut conn =
        rustls::ClientConnection::new(Arc::new(config), name).map_err(|e| e.to_string())?;
    let mut sock = std::net::TcpStream::connect((host, port))
        .map_err(|e| format!("unable to execute TLS connection towards {host}:{port}: {e}"))?;
    sock.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    while conn.is_handshaking() {
        conn.complete_io(&mut sock)
            .map_err(|e| format!("unable to execute TLS connection towards {host}:{port}: {e}"))?;
    }
    let chain = recorder.chain.lock().map(|c| c.clone()).unwrap_or_default();
    Ok(chain)
}

/// The host and port of an `https://` or `tls://` URL.
fn endpoint(url: &str) -> Result<(String, u16), String> {
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| format!("URL malformed: {url}"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let (host, port) = match authority.rsplit_once(':') {
        Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => (
            h.trim_matches(['[', ']']).to_string(),
            Some(
                p.parse::<u16>()
                    .map_err(|_| format!("URL malformed: {url}"))?,
            ),
        ),
        _ => (authority.trim_matches(['[', ']']).to_string(), None),
    };
    match (scheme, port) {
        ("https", p) => Ok((host, p.unwrap_or(443))),
        ("tls", Some(p)) => Ok((host, p)),
        ("tls", None) => Err(format!("Port missing from URL: {url}")),
        _ => Err(format!("Scheme {scheme:?} not supported")),
    }
}

#[async_trait]
impl DataSource for TlsCertificate {
    fn schema(&self) -> ResourceSchema {
        ResourceSchema::of_attributes(vec![
            (
                "url",
                AttributeSchema::optional(Type::String, "An https:// or tls:// URL."),
            ),
            (
                "content",
                AttributeSchema::optional(Type::String, "A certificate, PEM."),
            ),
            (
                "verify_chain",
                AttributeSchema::optional(Type::Bool, "Check the chain (default true)."),
            ),
            (
                "id",
                AttributeSchema::computed(Type::String, "SHA-1 of the certificates."),
            ),
            (
                "certificates",
                AttributeSchema::computed(Type::list(certificate_type()), "Root-most first."),
            ),
        ])
    }

    fn validate(&self, config: &Value) -> Vec<Problem> {
        let set = |n: &str| get(config, n).is_some_and(|v| !v.is_null());
        let mut out: Vec<Problem> = exactly_one_of(config, &["content", "url"], "url")
            .into_iter()
            .collect();
        if set("verify_chain") && set("content") {
            out.push(invalid(
                "verify_chain",
                "Attribute \"verify_chain\" cannot be specified when \"content\" is specified"
                    .to_string(),
            ));
        }
        if let Some(Err(e)) = string(config, "url").map(|u| endpoint(&u)) {
            out.push(invalid("url", e));
        }
        out
    }

    async fn read(&self, config: &Value) -> Result<Value, DriverError> {
        let ders: Vec<Vec<u8>> = match string(config, "content") {
            Some(text) => {
                let (tag, der) = pem_block(&text).map_err(read_failed)?;
                if tag != "CERTIFICATE" {
                    return Err(read_failed(format!(
                        "Certificate PEM should be \"CERTIFICATE\", got {tag:?}"
                    )));
                }
                vec![der]
            }
            None => {
                let (host, port) =
                    endpoint(&string(config, "url").unwrap_or_default()).map_err(read_failed)?;
                let verify = boolean(config, "verify_chain").unwrap_or(true);
                let mut chain =
                    tokio::task::spawn_blocking(move || fetch_chain(&host, port, verify))
                        .await
                        .map_err(|e| read_failed(e.to_string()))?
                        .map_err(read_failed)?;
                chain.reverse();
                chain
            }
        };
        let certs: Vec<Value> = ders
            .iter()
            .map(|d| describe(d))
            .collect::<Result<_, _>>()
            .map_err(read_failed)?;
        let all: Vec<u8> = ders.concat();
        Ok(with(
            config,
            vec![
                (
                    "verify_chain",
                    Value::Bool(boolean(config, "verify_chain").unwrap_or(true)),
                ),
                ("certificates", Value::List(certificate_type(), certs)),
                ("id", Value::string(hex(&sha1::Sha1::digest(&all)))),
            ],
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_give_host_and_port() {
        assert_eq!(
            endpoint("https://oidc.eks.us-east-1.amazonaws.com/id/ABC"),
            Ok(("oidc.eks.us-east-1.amazonaws.com".to_string(), 443))
        );
        assert_eq!(
            endpoint("tls://127.0.0.1:8443"),
            Ok(("127.0.0.1".to_string(), 8443))
        );
        assert!(endpoint("tls://example.com").is_err());
        assert!(endpoint("http://example.com").is_err());
    }

    #[test]
    fn values_are_escaped_as_rfc_2253() {
        assert_eq!(escape("a,b"), "a\\,b");
        assert_eq!(escape(" lead"), "\\ lead");
        assert_eq!(escape("#x"), "\\#x");
    }
}
