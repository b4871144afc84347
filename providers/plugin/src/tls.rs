//! go-plugin's AutoMTLS: each side makes a certificate for this one run,
//! the client hands its own to the plugin in `PLUGIN_CLIENT_CERT`, the
//! plugin answers with its own in the handshake line, and each accepts
//! exactly the other's certificate and nothing else.
//!
//! The certificates are self-signed and marked as CAs (go-plugin makes
//! them so), which a WebPKI chain check refuses as an end entity; so
//! trust here is pinning: the presented certificate must be byte for byte
//! the expected one, and the handshake's signatures are checked against
//! its key.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose, SignatureAlgorithm,
};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, Error, SignatureScheme};
use std::sync::Arc;

/// The name go-plugin puts in its certificates and expects of the peer's.
pub const HOST: &str = "localhost";

/// gRPC over TLS is HTTP/2, which servers (grpc-go among them) insist is
/// negotiated by ALPN.
const ALPN_H2: &[u8] = b"h2";

/// A certificate and its key, made for one run.
pub struct Identity {
    cert: CertificateDer<'static>,
    key: PrivatePkcs8KeyDer<'static>,
    pem: String,
}

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("making a certificate: {0}")]
    Generate(#[from] rcgen::Error),
    #[error("setting up TLS: {0}")]
    Config(#[from] Error),
    #[error("the client's certificate (PLUGIN_CLIENT_CERT) holds no PEM certificate")]
    NoPem,
}

impl Identity {
    /// A self-signed certificate for `localhost`, usable by a client and a
    /// server, as go-plugin makes them (which uses P-521).
    pub fn generate(alg: &'static SignatureAlgorithm) -> Result<Identity, TlsError> {
        let key = KeyPair::generate_for(alg)?;
        let mut params = CertificateParams::new(vec![HOST.to_string()])?;
        params.distinguished_name.push(DnType::CommonName, HOST);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
            KeyUsagePurpose::KeyAgreement,
            KeyUsagePurpose::KeyCertSign,
        ];
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ClientAuth,
            ExtendedKeyUsagePurpose::ServerAuth,
        ];
        let cert = params.self_signed(&key)?;
        Ok(Identity {
            pem: cert.pem(),
            cert: cert.der().clone(),
            key: PrivatePkcs8KeyDer::from(key.serialize_der()),
        })
    }

    /// The certificate as DER, what the handshake line carries.
    pub fn der(&self) -> &[u8] {
        self.cert.as_ref()
    }

    /// The certificate as PEM, what `PLUGIN_CLIENT_CERT` carries.
    pub fn pem(&self) -> &str {
        &self.pem
    }

    fn chain_and_key(&self) -> (Vec<CertificateDer<'static>>, PrivateKeyDer<'static>) {
        (
            vec![self.cert.clone()],
            PrivateKeyDer::Pkcs8(self.key.clone_key()),
        )
    }
}

/// The first certificate of a PEM text, as DER.
pub fn der_from_pem(pem: &str) -> Result<Vec<u8>, TlsError> {
    use rustls::pki_types::pem::PemObject;
    CertificateDer::from_pem_slice(pem.as_bytes())
        .map(|c| c.as_ref().to_vec())
        .map_err(|_| TlsError::NoPem)
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// A client's TLS settings: presents `ours`, accepts only `theirs`.
pub fn client_config(ours: &Identity, theirs: Vec<u8>) -> Result<rustls::ClientConfig, TlsError> {
    let provider = provider();
    let (chain, key) = ours.chain_and_key();
    let mut config = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(Pinned::new(theirs, provider)))
        .with_client_auth_cert(chain, key)?;
    config.alpn_protocols = vec![ALPN_H2.to_vec()];
    Ok(config)
}

/// A plugin server's TLS settings: presents `ours`, requires `theirs`.
pub fn server_config(ours: &Identity, theirs: Vec<u8>) -> Result<rustls::ServerConfig, TlsError> {
    let provider = provider();
    let (chain, key) = ours.chain_and_key();
    let mut config = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()?
        .with_client_cert_verifier(Arc::new(Pinned::new(theirs, provider)))
        .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![ALPN_H2.to_vec()];
    Ok(config)
}

/// Accepts one certificate, the peer's, and checks the handshake's
/// signatures against it.
#[derive(Debug)]
struct Pinned {
    der: Vec<u8>,
    provider: Arc<CryptoProvider>,
}

impl Pinned {
    fn new(der: Vec<u8>, provider: Arc<CryptoProvider>) -> Pinned {
        Pinned { der, provider }
    }

    fn check(&self, presented: &CertificateDer<'_>) -> Result<(), Error> {
        if presented.as_ref() == self.der.as_slice() {
            Ok(())
        } else {
            Err(Error::General(
                "the peer's certificate is not the one its handshake announced".into(),
            ))
        }
    }

    fn tls12(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        let algs = &self.provider.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algs)
    }

    fn tls13(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        let algs = &self.provider.signature_verification_algorithms;
        verify_tls13_signature(message, cert, dss, algs)
    }

    fn schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        self.check(end_entity)
            .map(|()| ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.tls12(message, cert, dss)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.tls13(message, cert, dss)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.schemes()
    }
}

impl ClientCertVerifier for Pinned {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }
    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, Error> {
        self.check(end_entity)
            .map(|()| ClientCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.tls12(message, cert, dss)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.tls13(message, cert, dss)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.schemes()
    }
}
