//! Certificates: `tls_self_signed_cert` (signed by its own key),
//! `tls_cert_request` (a signing request) and `tls_locally_signed_cert`
//! (a request signed by a CA's key), with the provider's subject, names,
//! uses, validity and renewal rule (once within `early_renewal_hours` of
//! its end, `ready_for_renewal` turns true and the next plan replaces
//! it).

use super::key::PrivateKey;
use crate::common::{boolean, failed, get, invalid, number, string, with};
use crate::provider::Resource;
use async_trait::async_trait;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyIdMethod,
    KeyUsagePurpose, SanType, SerialNumber,
};
use strata_provider::values::{block, blocks, strings};
use strata_provider::{AttributeSchema, BlockNesting, DriverError, Problem, ResourceSchema};
use strata_value::types::Type;
use strata_value::value::Value;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// The provider's names for key usages and extended key usages.
const KEY_USAGES: [(&str, KeyUsagePurpose); 9] = [
    ("digital_signature", KeyUsagePurpose::DigitalSignature),
    ("content_commitment", KeyUsagePurpose::ContentCommitment),
    ("key_encipherment", KeyUsagePurpose::KeyEncipherment),
    ("data_encipherment", KeyUsagePurpose::DataEncipherment),
    ("key_agreement", KeyUsagePurpose::KeyAgreement),
    ("cert_signing", KeyUsagePurpose::KeyCertSign),
    ("crl_signing", KeyUsagePurpose::CrlSign),
    ("encipher_only", KeyUsagePurpose::EncipherOnly),
    ("decipher_only", KeyUsagePurpose::DecipherOnly),
];

/// Extended usages by name, with their OIDs where rcgen has no name.
fn extended_usage(name: &str) -> Option<ExtendedKeyUsagePurpose> {
    let other = |oid: &[u64]| ExtendedKeyUsagePurpose::Other(oid.to_vec());
    Some(match name {
        "any_extended" => ExtendedKeyUsagePurpose::Any,
        "server_auth" => ExtendedKeyUsagePurpose::ServerAuth,
        "client_auth" => ExtendedKeyUsagePurpose::ClientAuth,
        "code_signing" => ExtendedKeyUsagePurpose::CodeSigning,
        "email_protection" => ExtendedKeyUsagePurpose::EmailProtection,
        "timestamping" => ExtendedKeyUsagePurpose::TimeStamping,
        "ocsp_signing" => ExtendedKeyUsagePurpose::OcspSigning,
        "ipsec_end_system" => other(&[1, 3, 6, 1, 5, 5, 7, 3, 5]),
        "ipsec_tunnel" => other(&[1, 3, 6, 1, 5, 5, 7, 3, 6]),
        "ipsec_user" => other(&[1, 3, 6, 1, 5, 5, 7, 3, 7]),
        "microsoft_server_gated_crypto" => other(&[1, 3, 6, 1, 4, 1, 311, 10, 3, 3]),
        "netscape_server_gated_crypto" => other(&[2, 16, 840, 1, 113730, 4, 1]),
        "microsoft_commercial_code_signing" => other(&[1, 3, 6, 1, 4, 1, 311, 2, 1, 22]),
        "microsoft_kernel_code_signing" => other(&[1, 3, 6, 1, 4, 1, 311, 61, 1, 1]),
        _ => return None,
    })
}

fn known_use(name: &str) -> bool {
    KEY_USAGES.iter().any(|(n, _)| *n == name) || extended_usage(name).is_some()
}

/// The subject block's attributes, in the order Go writes a name.
const SUBJECT: [(&str, &[u64]); 10] = [
    ("country", &[2, 5, 4, 6]),
    ("organization", &[2, 5, 4, 10]),
    ("organizational_unit", &[2, 5, 4, 11]),
    ("locality", &[2, 5, 4, 7]),
    ("province", &[2, 5, 4, 8]),
    ("street_address", &[2, 5, 4, 9]),
    ("postal_code", &[2, 5, 4, 17]),
    ("serial_number", &[2, 5, 4, 5]),
    ("common_name", &[2, 5, 4, 3]),
    ("email_address", &[1, 2, 840, 113549, 1, 9, 1]),
];

fn subject_block() -> strata_provider::BlockSchema {
    let text = |d| AttributeSchema::optional(Type::String, d).force_new();
    let mut b = block(
        BlockNesting::List,
        0,
        vec![
            ("organization", text("O")),
            ("common_name", text("CN")),
            ("organizational_unit", text("OU")),
            (
                "street_address",
                AttributeSchema::optional(Type::list(Type::String), "STREET").force_new(),
            ),
            ("locality", text("L")),
            ("province", text("ST")),
            ("country", text("C")),
            ("postal_code", text("POSTALCODE")),
            ("serial_number", text("SERIALNUMBER")),
            ("email_address", text("emailAddress")),
        ],
    );
    b.max_items = Some(1);
    b
}

/// The subject block's names into `p`.
fn subject_into(planned: &Value, p: &mut CertificateParams) {
    p.distinguished_name = rcgen::DistinguishedName::new();
    let Some(subject) = blocks(planned, "subject").into_iter().next() else {
        return;
    };
    for (name, oid) in SUBJECT {
        let values = match name {
            "street_address" => strings(&subject, name),
            _ => string(&subject, name).into_iter().collect(),
        };
        for v in values.into_iter().filter(|v| !v.is_empty()) {
            let ty = match name {
                "country" => DnType::CountryName,
                "organization" => DnType::OrganizationName,
                "organizational_unit" => DnType::OrganizationalUnitName,
                "locality" => DnType::LocalityName,
                "province" => DnType::StateOrProvinceName,
                "common_name" => DnType::CommonName,
                _ => DnType::CustomDnType(oid.to_vec()),
            };
            p.distinguished_name.push(ty, v);
        }
    }
}

/// The DNS names, IP addresses and URIs into `p`.
fn names_into(planned: &Value, p: &mut CertificateParams) -> Result<(), String> {
    for d in strings(planned, "dns_names") {
        let name = d
            .clone()
            .try_into()
            .map_err(|e| format!("invalid DNS name {d:?}: {e}"))?;
        p.subject_alt_names.push(SanType::DnsName(name));
    }
    for ip in strings(planned, "ip_addresses") {
        let addr = ip
            .parse()
            .map_err(|e| format!("invalid IP address {ip:?}: {e}"))?;
        p.subject_alt_names.push(SanType::IpAddress(addr));
    }
    for u in strings(planned, "uris") {
        let uri = u
            .clone()
            .try_into()
            .map_err(|e| format!("invalid URI {u:?}: {e}"))?;
        p.subject_alt_names.push(SanType::URI(uri));
    }
    Ok(())
}

/// What an issued certificate adds to its names: validity from `now`, a
/// serial, uses, CA constraints and key identifiers.
fn issue_into(
    planned: &Value,
    now: OffsetDateTime,
    p: &mut CertificateParams,
) -> Result<(), String> {
    let hours = number(planned, "validity_period_hours").unwrap_or(0);
    p.not_before = now;
    p.not_after = crate::time::shift(now, hours, 3_600)?;
    // A positive 127-bit number: the provider's are below 2^128 and
    // positive, and DER would read a top bit set as negative.
    let mut serial: [u8; 16] = rand::random();
    serial[0] &= 0x7f;
    p.serial_number = Some(SerialNumber::from_slice(&serial));
    p.key_usages.clear();
    p.extended_key_usages.clear();
    for u in strings(planned, "allowed_uses") {
        if let Some((_, k)) = KEY_USAGES.iter().find(|(n, _)| *n == u) {
            p.key_usages.push(*k);
        } else if let Some(e) = extended_usage(&u) {
            p.extended_key_usages.push(e);
        }
    }
    p.is_ca = match boolean(planned, "is_ca_certificate") {
        Some(true) => IsCa::Ca(match number(planned, "max_path_length") {
            Some(n) if n >= 0 => BasicConstraints::Constrained(n.min(255) as u8),
            _ => BasicConstraints::Unconstrained,
        }),
        _ => IsCa::ExplicitNoCa,
    };
    p.key_identifier_method = KeyIdMethod::Sha256;
    p.use_authority_key_identifier_extension =
        boolean(planned, "set_authority_key_id") == Some(true);
    Ok(())
}

fn text(t: OffsetDateTime) -> String {
    t.replace_nanosecond(0)
        .unwrap_or(t)
        .format(&Rfc3339)
        .unwrap_or_default()
}

fn now() -> OffsetDateTime {
    let t = OffsetDateTime::now_utc();
    t.replace_nanosecond(0).unwrap_or(t)
}

/// A key from PEM and the same key as rcgen signs with.
fn signer(pem_text: &str) -> Result<(PrivateKey, rcgen::KeyPair), String> {
    let key = PrivateKey::from_pem(pem_text)?;
    let pair = rcgen::KeyPair::from_pem(&key.pkcs8_pem()?)
        .map_err(|e| format!("the key cannot sign a certificate here: {e}"))?;
    Ok((key, pair))
}

/// The attributes an issued certificate has, self-signed or signed by a
/// CA.
fn issued_schema() -> Vec<(&'static str, AttributeSchema)> {
    let flag = |d| {
        AttributeSchema::optional(Type::Bool, d)
            .and_computed()
            .force_new()
    };
    let out = |d| AttributeSchema::computed(Type::String, d);
    vec![
        (
            "validity_period_hours",
            AttributeSchema::required(Type::Number, "How long the certificate is valid.")
                .force_new(),
        ),
        (
            "allowed_uses",
            AttributeSchema::required(
                Type::list(Type::String),
                "Key usages and extended key usages.",
            )
            .force_new(),
        ),
        (
            "early_renewal_hours",
            AttributeSchema::optional(Type::Number, "Renew this long before the end.")
                .and_computed(),
        ),
        (
            "is_ca_certificate",
            flag("A certificate authority (default false)."),
        ),
        (
            "max_path_length",
            AttributeSchema::optional(Type::Number, "Intermediates below a CA.")
                .and_computed()
                .force_new(),
        ),
        (
            "set_subject_key_id",
            flag("Include a subject key id (default false)."),
        ),
        ("cert_pem", out("The certificate, PEM.")),
        (
            "ready_for_renewal",
            AttributeSchema::computed(Type::Bool, "Within early_renewal_hours of the end.")
                .force_new(),
        ),
        ("validity_start_time", out("Start of validity, RFC 3339.")),
        ("validity_end_time", out("End of validity, RFC 3339.")),
        ("id", out("The serial number, decimal.")),
    ]
}

fn issued_defaults() -> Vec<(&'static str, Value)> {
    vec![
        ("early_renewal_hours", Value::int(0)),
        ("is_ca_certificate", Value::Bool(false)),
        ("set_subject_key_id", Value::Bool(false)),
        ("ready_for_renewal", Value::Bool(false)),
    ]
}

fn check_issued(config: &Value, keys: &[&str]) -> Vec<Problem> {
    let mut out = Vec::new();
    for u in strings(config, "allowed_uses")
        .iter()
        .filter(|u| !known_use(u))
    {
        out.push(invalid(
            "allowed_uses",
            format!("{u:?} is not a key usage the tls provider knows"),
        ));
    }
    for k in keys {
        if let Some(Err(e)) = string(config, k).map(|t| PrivateKey::from_pem(&t)) {
            out.push(invalid(k, e));
        }
    }
    if number(config, "validity_period_hours").is_some_and(|h| h < 0) {
        out.push(invalid(
            "validity_period_hours",
            "Attribute validity_period_hours value must be at least 0".to_string(),
        ));
    }
    if number(config, "max_path_length").is_some_and(|h| h < -1) {
        out.push(invalid(
            "max_path_length",
            "Attribute max_path_length value must be at least -1".to_string(),
        ));
    }
    out
}

/// The planned object with what issuing `cert` decided.
fn issued(
    planned: &Value,
    p: &CertificateParams,
    cert: &rcgen::Certificate,
    extra: Vec<(&str, Value)>,
) -> Value {
    let serial = p
        .serial_number
        .as_ref()
        .map(|s| num_bigint::BigUint::from_bytes_be(s.as_ref()).to_string())
        .unwrap_or_default();
    let max_path = get(planned, "max_path_length")
        .filter(|v| !v.is_null() && v.is_known())
        .cloned();
    let mut pairs = vec![
        (
            "cert_pem",
            Value::string(super::key::pem("CERTIFICATE", cert.der())),
        ),
        ("validity_start_time", Value::string(text(p.not_before))),
        ("validity_end_time", Value::string(text(p.not_after))),
        ("ready_for_renewal", Value::Bool(false)),
        ("max_path_length", max_path.unwrap_or(Value::int(0))),
        ("id", Value::string(serial)),
    ];
    pairs.extend(extra);
    with(planned, pairs)
}

/// Ready for renewal once within `early_renewal_hours` of its end.
fn renewal(stored: &Value) -> Value {
    let end =
        string(stored, "validity_end_time").and_then(|t| OffsetDateTime::parse(&t, &Rfc3339).ok());
    let early = number(stored, "early_renewal_hours").unwrap_or(0);
    // A renewal window past the range of dates is always open.
    let renew_at = end.map(|end| crate::time::shift(end, early.saturating_neg(), 3_600).ok());
    let due = match renew_at {
        Some(Some(at)) => OffsetDateTime::now_utc() >= at,
        Some(None) => true,
        None => false,
    };
    with(stored, vec![("ready_for_renewal", Value::Bool(due))])
}

fn names_schema() -> Vec<(&'static str, AttributeSchema)> {
    let list = |d| AttributeSchema::optional(Type::list(Type::String), d).force_new();
    vec![
        ("dns_names", list("DNS names it is for.")),
        ("ip_addresses", list("IP addresses it is for.")),
        ("uris", list("URIs it is for.")),
    ]
}

fn key_schema(name: &'static str, description: &'static str) -> (&'static str, AttributeSchema) {
    (
        name,
        AttributeSchema::required(Type::String, description)
            .force_new()
            .sensitive(),
    )
}

pub(crate) struct SelfSignedCert;

#[async_trait]
impl Resource for SelfSignedCert {
    fn schema(&self) -> ResourceSchema {
        let mut attributes = vec![key_schema("private_key_pem", "The key to sign with, PEM.")];
        attributes.extend(names_schema());
        attributes.extend(issued_schema());
        attributes.push((
            "set_authority_key_id",
            AttributeSchema::optional(Type::Bool, "Include an authority key id (default false).")
                .and_computed()
                .force_new(),
        ));
        attributes.push((
            "key_algorithm",
            AttributeSchema::computed(Type::String, "The key's algorithm."),
        ));
        let mut s = ResourceSchema::of_attributes(attributes);
        s.blocks.insert("subject".to_string(), subject_block());
        s
    }

    fn defaults(&self) -> Vec<(&'static str, Value)> {
        let mut d = issued_defaults();
        d.push(("set_authority_key_id", Value::Bool(false)));
        d
    }

    fn validate(&self, config: &Value) -> Vec<Problem> {
        check_issued(config, &["private_key_pem"])
    }

    async fn create(&self, planned: &Value) -> Result<Value, DriverError> {
        let fail = |e: String| failed("tls_self_signed_cert", "create", e);
        let (key, pair) =
            signer(&string(planned, "private_key_pem").unwrap_or_default()).map_err(fail)?;
        let mut p = CertificateParams::default();
        subject_into(planned, &mut p);
        names_into(planned, &mut p).map_err(fail)?;
        issue_into(planned, now(), &mut p).map_err(fail)?;
        let cert = p
            .self_signed(&pair)
            .map_err(|e| fail(format!("error creating certificate: {e}")))?;
        Ok(issued(
            planned,
            &p,
            &cert,
            vec![("key_algorithm", Value::string(key.algorithm()))],
        ))
    }

    async fn read(&self, stored: &Value) -> Result<Option<Value>, DriverError> {
        Ok(Some(renewal(stored)))
    }
}

pub(crate) struct LocallySignedCert;

#[async_trait]
impl Resource for LocallySignedCert {
    fn schema(&self) -> ResourceSchema {
        let mut attributes = vec![
            (
                "cert_request_pem",
                AttributeSchema::required(Type::String, "The request to sign, PEM.").force_new(),
            ),
            key_schema("ca_private_key_pem", "The CA's key, PEM."),
            (
                "ca_cert_pem",
                AttributeSchema::required(Type::String, "The CA's certificate, PEM.").force_new(),
            ),
            (
                "ca_key_algorithm",
                AttributeSchema::computed(Type::String, "The CA key's algorithm."),
            ),
        ];
        attributes.extend(issued_schema());
        ResourceSchema::of_attributes(attributes)
    }

    fn defaults(&self) -> Vec<(&'static str, Value)> {
        issued_defaults()
    }

    fn validate(&self, config: &Value) -> Vec<Problem> {
        check_issued(config, &["ca_private_key_pem"])
    }

    async fn create(&self, planned: &Value) -> Result<Value, DriverError> {
        let fail = |e: String| failed("tls_locally_signed_cert", "create", e);
        let (ca_key, ca_pair) =
            signer(&string(planned, "ca_private_key_pem").unwrap_or_default()).map_err(fail)?;
        let ca_cert = string(planned, "ca_cert_pem").unwrap_or_default();
        let issuer = rcgen::Issuer::from_ca_cert_pem(&ca_cert, ca_pair)
            .map_err(|e| fail(format!("failed to read the CA certificate: {e}")))?;
        let mut csr = rcgen::CertificateSigningRequestParams::from_pem(
            &string(planned, "cert_request_pem").unwrap_or_default(),
        )
        .map_err(|e| fail(format!("failed to read the certificate request: {e}")))?;
        issue_into(planned, now(), &mut csr.params).map_err(fail)?;
        csr.params.use_authority_key_identifier_extension = true;
        let cert = csr
            .signed_by(&issuer)
            .map_err(|e| fail(format!("error creating certificate: {e}")))?;
        Ok(issued(
            planned,
            &csr.params,
            &cert,
            vec![("ca_key_algorithm", Value::string(ca_key.algorithm()))],
        ))
    }

    async fn read(&self, stored: &Value) -> Result<Option<Value>, DriverError> {
        Ok(Some(renewal(stored)))
    }
}

pub(crate) struct CertRequest;

#[async_trait]
impl Resource for CertRequest {
    fn schema(&self) -> ResourceSchema {
        let mut attributes = vec![key_schema("private_key_pem", "The requesting key, PEM.")];
        attributes.extend(names_schema());
        attributes.extend([
            (
                "key_algorithm",
                AttributeSchema::computed(Type::String, "The key's algorithm."),
            ),
            (
                "cert_request_pem",
                AttributeSchema::computed(Type::String, "The request, PEM."),
            ),
            (
                "id",
                AttributeSchema::computed(Type::String, "SHA-1 of the request."),
            ),
        ]);
        let mut s = ResourceSchema::of_attributes(attributes);
        s.blocks.insert("subject".to_string(), subject_block());
        s
    }

    fn validate(&self, config: &Value) -> Vec<Problem> {
        check_issued(config, &["private_key_pem"])
    }

    async fn create(&self, planned: &Value) -> Result<Value, DriverError> {
        let fail = |e: String| failed("tls_cert_request", "create", e);
        let (key, pair) =
            signer(&string(planned, "private_key_pem").unwrap_or_default()).map_err(fail)?;
        let mut p = CertificateParams::default();
        subject_into(planned, &mut p);
        names_into(planned, &mut p).map_err(fail)?;
        let csr = p
            .serialize_request(&pair)
            .map_err(|e| fail(format!("error creating certificate request: {e}")))?;
        let der = csr.der().as_ref().to_vec();
        Ok(with(
            planned,
            vec![
                ("key_algorithm", Value::string(key.algorithm())),
                (
                    "cert_request_pem",
                    Value::string(super::key::pem("CERTIFICATE REQUEST", &der)),
                ),
                ("id", Value::string(super::key::state_hash(&der))),
            ],
        ))
    }
}
