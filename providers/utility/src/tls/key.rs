//! Private keys as the `tls` provider makes and writes them: RSA, ECDSA
//! (P224, P256, P384, P521) and ED25519; PEM in each algorithm's own form
//! and as PKCS#8, OpenSSH's formats, and the public key's PKIX form, id
//! and fingerprints.

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use base64::Engine;
use pkcs8::{DecodePrivateKey, EncodePrivateKey, EncodePublicKey};
use rsa::pkcs1::EncodeRsaPrivateKey;
use rsa::traits::{PrivateKeyParts, PublicKeyParts};
use sha2::Digest;

/// `P224` … `P521`, as the provider names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Curve {
    P224,
    P256,
    P384,
    P521,
}

impl Curve {
    pub(crate) const NAMES: [&'static str; 4] = ["P224", "P256", "P384", "P521"];

    pub(crate) fn named(name: &str) -> Option<Curve> {
        match name {
            "P224" => Some(Curve::P224),
            "P256" => Some(Curve::P256),
            "P384" => Some(Curve::P384),
            "P521" => Some(Curve::P521),
            _ => None,
        }
    }

    /// OpenSSH's name, for the curves it has.
    fn ssh(self) -> Option<&'static str> {
        match self {
            Curve::P224 => None,
            Curve::P256 => Some("nistp256"),
            Curve::P384 => Some("nistp384"),
            Curve::P521 => Some("nistp521"),
        }
    }
}

/// A private key, kept as the secret it is; every form is made from it.
pub(crate) enum PrivateKey {
    Rsa(rsa::RsaPrivateKey),
    P224(p224::SecretKey),
    P256(p256::SecretKey),
    P384(p384::SecretKey),
    P521(p521::SecretKey),
    Ed25519(ed25519_dalek::SigningKey),
}

/// Go's `pem.EncodeToMemory`: base64 in lines of 64.
pub(crate) fn pem(tag: &str, der: &[u8]) -> String {
    let b64 = STANDARD.encode(der);
    let mut out = format!("-----BEGIN {tag}-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str(&format!("-----END {tag}-----\n"));
    out
}

/// The first PEM block of `text`: its tag and bytes.
pub(crate) fn pem_block(text: &str) -> Result<(String, Vec<u8>), String> {
    let start = text
        .find("-----BEGIN ")
        .ok_or("failed to decode PEM block: no BEGIN line")?;
    let rest = &text[start + 11..];
    let tag_end = rest.find("-----").ok_or("failed to decode PEM block")?;
    let tag = rest[..tag_end].to_string();
    let body_start = tag_end + 5;
    let end_line = format!("-----END {tag}-----");
    let body_end = rest
        .find(&end_line)
        .ok_or("failed to decode PEM block: no END line")?;
    let body: String = rest[body_start..body_end]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    let der = STANDARD
        .decode(body)
        .map_err(|e| format!("failed to decode PEM block: {e}"))?;
    Ok((tag, der))
}

fn encoded<E: std::fmt::Display>(what: &str) -> impl Fn(E) -> String + '_ {
    move |e| format!("unable to encode the {what}: {e}")
}

/// An `EC PRIVATE KEY` block with the curve named and the public point,
/// as Go's `x509.MarshalECPrivateKey` writes it.
fn sec1_pem<C>(scalar: &[u8], public: &p256::elliptic_curve::PublicKey<C>) -> Result<String, String>
where
    C: p256::elliptic_curve::CurveArithmetic + pkcs8::AssociatedOid,
    C::AffinePoint: p256::elliptic_curve::sec1::FromEncodedPoint<C>
        + p256::elliptic_curve::sec1::ToEncodedPoint<C>,
    C::FieldBytesSize: p256::elliptic_curve::sec1::ModulusSize,
{
    use p256::elliptic_curve::sec1::ToEncodedPoint;
    use sec1::der::Encode;
    let point = public.to_encoded_point(false);
    let key = sec1::EcPrivateKey {
        private_key: scalar,
        parameters: Some(sec1::EcParameters::NamedCurve(C::OID)),
        public_key: Some(point.as_bytes()),
    };
    let der = key.to_der().map_err(encoded("key"))?;
    Ok(pem("EC PRIVATE KEY", &der))
}

/// `der` as an SSH `mpint`: big-endian, a leading zero when the top bit
/// is set, nothing for zero.
fn mpint(out: &mut Vec<u8>, be: &[u8]) {
    let trimmed: &[u8] = match be.iter().position(|b| *b != 0) {
        Some(i) => &be[i..],
        None => &[],
    };
    let pad = trimmed.first().is_some_and(|b| b & 0x80 != 0);
    let len = trimmed.len() + usize::from(pad);
    out.extend_from_slice(&(len as u32).to_be_bytes());
    if pad {
        out.push(0);
    }
    out.extend_from_slice(trimmed);
}

fn ssh_string(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&(s.len() as u32).to_be_bytes());
    out.extend_from_slice(s);
}

impl PrivateKey {
    /// A new key; `rsa_bits` and `curve` as configured.
    pub(crate) fn generate(
        algorithm: &str,
        rsa_bits: i64,
        curve: &str,
    ) -> Result<PrivateKey, String> {
        let mut rng = rand::rngs::OsRng;
        match algorithm {
            "RSA" => {
                use aws_lc_rs::encoding::AsDer;
                let size = match rsa_bits {
                    2048 => aws_lc_rs::rsa::KeySize::Rsa2048,
                    3072 => aws_lc_rs::rsa::KeySize::Rsa3072,
                    4096 => aws_lc_rs::rsa::KeySize::Rsa4096,
                    8192 => aws_lc_rs::rsa::KeySize::Rsa8192,
                    n => return Err(format!("RSA keys of {n} bits are not made by strata's built-in tls provider: 2048, 3072, 4096 or 8192 are")),
                };
                let pair = aws_lc_rs::rsa::KeyPair::generate(size)
                    .map_err(|e| format!("failed to generate an RSA key: {e}"))?;
                let der = pair
                    .as_der()
                    .map_err(|e| format!("failed to encode an RSA key: {e}"))?;
                rsa::RsaPrivateKey::from_pkcs8_der(der.as_ref())
                    .map(PrivateKey::Rsa)
                    .map_err(|e| format!("failed to read back an RSA key: {e}"))
            }
            "ECDSA" => Ok(match Curve::named(curve) {
                Some(Curve::P224) => PrivateKey::P224(p224::SecretKey::random(&mut rng)),
                Some(Curve::P256) => PrivateKey::P256(p256::SecretKey::random(&mut rng)),
                Some(Curve::P384) => PrivateKey::P384(p384::SecretKey::random(&mut rng)),
                Some(Curve::P521) => PrivateKey::P521(p521::SecretKey::random(&mut rng)),
                None => {
                    return Err(format!(
                        "invalid ECDSA curve; supported values are: {:?}",
                        Curve::NAMES
                    ))
                }
            }),
            "ED25519" => Ok(PrivateKey::Ed25519(ed25519_dalek::SigningKey::generate(
                &mut rng,
            ))),
            other => Err(format!("Key Algorithm {other:?} is not supported")),
        }
    }

    /// A key from PEM: `RSA PRIVATE KEY`, `EC PRIVATE KEY` or `PRIVATE KEY`.
    pub(crate) fn from_pem(text: &str) -> Result<PrivateKey, String> {
        let (tag, der) = pem_block(text)?;
        let bad =
            |e: String| format!("failed to parse private key given PEM preamble '{tag}': {e}");
        match tag.as_str() {
            "RSA PRIVATE KEY" => {
                use rsa::pkcs1::DecodeRsaPrivateKey;
                rsa::RsaPrivateKey::from_pkcs1_der(&der)
                    .map(PrivateKey::Rsa)
                    .map_err(|e| bad(e.to_string()))
            }
            "EC PRIVATE KEY" => PrivateKey::from_sec1(&der).map_err(bad),
            "PRIVATE KEY" => PrivateKey::from_pkcs8(&der).map_err(bad),
            other => Err(format!(
                "unable to determine parser for PEM preamble: {other}"
            )),
        }
    }

    fn from_sec1(der: &[u8]) -> Result<PrivateKey, String> {
        p256::SecretKey::from_sec1_der(der)
            .map(PrivateKey::P256)
            .or_else(|_| p384::SecretKey::from_sec1_der(der).map(PrivateKey::P384))
            .or_else(|_| p521::SecretKey::from_sec1_der(der).map(PrivateKey::P521))
            .or_else(|_| p224::SecretKey::from_sec1_der(der).map(PrivateKey::P224))
            .map_err(|e| e.to_string())
    }

    fn from_pkcs8(der: &[u8]) -> Result<PrivateKey, String> {
        if let Ok(k) = rsa::RsaPrivateKey::from_pkcs8_der(der) {
            return Ok(PrivateKey::Rsa(k));
        }
        if let Ok(k) = ed25519_dalek::SigningKey::from_pkcs8_der(der) {
            return Ok(PrivateKey::Ed25519(k));
        }
        p256::SecretKey::from_pkcs8_der(der)
            .map(PrivateKey::P256)
            .or_else(|_| p384::SecretKey::from_pkcs8_der(der).map(PrivateKey::P384))
            .or_else(|_| p521::SecretKey::from_pkcs8_der(der).map(PrivateKey::P521))
            .or_else(|_| p224::SecretKey::from_pkcs8_der(der).map(PrivateKey::P224))
            .map_err(|e| e.to_string())
    }

    /// `RSA`, `ECDSA` or `ED25519`.
    pub(crate) fn algorithm(&self) -> &'static str {
        match self {
            PrivateKey::Rsa(_) => "RSA",
            PrivateKey::Ed25519(_) => "ED25519",
            _ => "ECDSA",
        }
    }

    /// PEM in the algorithm's own form (PKCS#1, SEC 1, or PKCS#8 for
    /// ED25519), as the provider's `private_key_pem`.
    pub(crate) fn pem(&self) -> Result<String, String> {
        match self {
            PrivateKey::Rsa(k) => {
                let der = k.to_pkcs1_der().map_err(encoded("key"))?;
                Ok(pem("RSA PRIVATE KEY", der.as_bytes()))
            }
            PrivateKey::P224(k) => sec1_pem::<p224::NistP224>(&k.to_bytes(), &k.public_key()),
            PrivateKey::P256(k) => sec1_pem::<p256::NistP256>(&k.to_bytes(), &k.public_key()),
            PrivateKey::P384(k) => sec1_pem::<p384::NistP384>(&k.to_bytes(), &k.public_key()),
            PrivateKey::P521(k) => sec1_pem::<p521::NistP521>(&k.to_bytes(), &k.public_key()),
            PrivateKey::Ed25519(_) => self.pkcs8_pem(),
        }
    }

    /// PKCS#8 DER; for ED25519 without the public key, as Go writes it.
    pub(crate) fn pkcs8_der(&self) -> Result<Vec<u8>, String> {
        let doc = match self {
            PrivateKey::Rsa(k) => k.to_pkcs8_der(),
            PrivateKey::P224(k) => k.to_pkcs8_der(),
            PrivateKey::P256(k) => k.to_pkcs8_der(),
            PrivateKey::P384(k) => k.to_pkcs8_der(),
            PrivateKey::P521(k) => k.to_pkcs8_der(),
            PrivateKey::Ed25519(k) => ed25519_dalek::pkcs8::KeypairBytes {
                secret_key: k.to_bytes(),
                public_key: None,
            }
            .to_pkcs8_der(),
        };
        doc.map(|d| d.as_bytes().to_vec())
            .map_err(encoded("key as PKCS#8"))
    }

    pub(crate) fn pkcs8_pem(&self) -> Result<String, String> {
        Ok(pem("PRIVATE KEY", &self.pkcs8_der()?))
    }

    /// The public key in PKIX (SubjectPublicKeyInfo) DER.
    pub(crate) fn public_der(&self) -> Result<Vec<u8>, String> {
        let doc = match self {
            PrivateKey::Rsa(k) => k.to_public_key().to_public_key_der(),
            PrivateKey::P224(k) => k.public_key().to_public_key_der(),
            PrivateKey::P256(k) => k.public_key().to_public_key_der(),
            PrivateKey::P384(k) => k.public_key().to_public_key_der(),
            PrivateKey::P521(k) => k.public_key().to_public_key_der(),
            PrivateKey::Ed25519(k) => k.verifying_key().to_public_key_der(),
        };
        doc.map(|d| d.as_bytes().to_vec())
            .map_err(encoded("public key"))
    }

    /// The key type and public blob in SSH's wire form, for the keys
    /// OpenSSH has (not P224).
    fn ssh_public(&self) -> Option<(String, Vec<u8>)> {
        let mut blob = Vec::new();
        let name = match self {
            PrivateKey::Rsa(k) => {
                ssh_string(&mut blob, b"ssh-rsa");
                mpint(&mut blob, &k.e().to_bytes_be());
                mpint(&mut blob, &k.n().to_bytes_be());
                "ssh-rsa".to_string()
            }
            PrivateKey::Ed25519(k) => {
                ssh_string(&mut blob, b"ssh-ed25519");
                ssh_string(&mut blob, k.verifying_key().as_bytes());
                "ssh-ed25519".to_string()
            }
            _ => {
                let (curve, point) = self.ec_point()?;
                let name = format!("ecdsa-sha2-{curve}");
                ssh_string(&mut blob, name.as_bytes());
                ssh_string(&mut blob, curve.as_bytes());
                ssh_string(&mut blob, &point);
                name
            }
        };
        Some((name, blob))
    }

    /// OpenSSH's curve name and the uncompressed public point.
    fn ec_point(&self) -> Option<(&'static str, Vec<u8>)> {
        use p256::elliptic_curve::sec1::ToEncodedPoint;
        let (curve, point) = match self {
            PrivateKey::P256(k) => (
                Curve::P256,
                k.public_key().to_encoded_point(false).as_bytes().to_vec(),
            ),
            PrivateKey::P384(k) => (
                Curve::P384,
                k.public_key().to_encoded_point(false).as_bytes().to_vec(),
            ),
            PrivateKey::P521(k) => (
                Curve::P521,
                k.public_key().to_encoded_point(false).as_bytes().to_vec(),
            ),
            _ => return None,
        };
        Some((curve.ssh()?, point))
    }

    /// The private scalar of an ECDSA key, big-endian.
    fn ec_scalar(&self) -> Option<Vec<u8>> {
        Some(match self {
            PrivateKey::P256(k) => k.to_bytes().to_vec(),
            PrivateKey::P384(k) => k.to_bytes().to_vec(),
            PrivateKey::P521(k) => k.to_bytes().to_vec(),
            _ => return None,
        })
    }

    /// `openssh-key-v1` unencrypted, as Go's `ssh.MarshalPrivateKey(key,
    /// "")` writes it; empty for a key OpenSSH lacks (P224).
    pub(crate) fn openssh(&self) -> Result<String, String> {
        let Some((name, public)) = self.ssh_public() else {
            return Ok(String::new());
        };
        let check = rand::random::<u32>().to_be_bytes();
        let mut private = Vec::new();
        private.extend_from_slice(&check);
        private.extend_from_slice(&check);
        ssh_string(&mut private, name.as_bytes());
        match self {
            PrivateKey::Rsa(k) => {
                let [p, q] = match k.primes() {
                    [p, q] => [p, q],
                    _ => {
                        return Err(
                            "an RSA key of more than two primes has no OpenSSH form".to_string()
                        )
                    }
                };
                let iqmp = k
                    .crt_coefficient()
                    .ok_or("an RSA key without its CRT coefficient")?;
                for n in [k.n(), k.e(), k.d(), &iqmp, p, q] {
                    mpint(&mut private, &n.to_bytes_be());
                }
            }
            PrivateKey::Ed25519(k) => {
                ssh_string(&mut private, k.verifying_key().as_bytes());
                ssh_string(&mut private, &k.to_keypair_bytes());
            }
            _ => {
                let (curve, point) = self.ec_point().ok_or("no public point")?;
                ssh_string(&mut private, curve.as_bytes());
                ssh_string(&mut private, &point);
                mpint(&mut private, &self.ec_scalar().ok_or("no private scalar")?);
            }
        }
        ssh_string(&mut private, b"");
        let mut pad = 1u8;
        while private.len() % 8 != 0 {
            private.push(pad);
            pad += 1;
        }
        let mut out = b"openssh-key-v1\0".to_vec();
        ssh_string(&mut out, b"none");
        ssh_string(&mut out, b"none");
        ssh_string(&mut out, b"");
        out.extend_from_slice(&1u32.to_be_bytes());
        ssh_string(&mut out, &public);
        ssh_string(&mut out, &private);
        Ok(pem("OPENSSH PRIVATE KEY", &out))
    }
}

/// Go's `strings.TrimSpace` over raw bytes, which the provider's id
/// applies to the public key's DER before hashing it.
fn trim_space(mut b: &[u8]) -> &[u8] {
    const WIDE: [&[u8]; 4] = [b"\xc2\x85", b"\xc2\xa0", b"\xe3\x80\x80", b"\xe1\x9a\x80"];
    let ascii = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
    let wide_at_end = |b: &[u8]| {
        WIDE.iter()
            .find(|w| b.ends_with(w))
            .map(|w| w.len())
            .or_else(|| {
                (b.len() >= 3
                    && b[b.len() - 3] == 0xe2
                    && b[b.len() - 2] == 0x80
                    && matches!(b[b.len() - 1], 0x80..=0x8a | 0xa8 | 0xa9 | 0xaf))
                .then_some(3)
                .or_else(|| b.ends_with(b"\xe2\x81\x9f").then_some(3))
            })
    };
    loop {
        if b.first().is_some_and(|c| ascii(*c)) {
            b = &b[1..];
        } else if let Some(w) = WIDE.iter().find(|w| b.starts_with(w)) {
            b = &b[w.len()..];
        } else {
            break;
        }
    }
    loop {
        if b.last().is_some_and(|c| ascii(*c)) {
            b = &b[..b.len() - 1];
        } else if let Some(n) = wide_at_end(b) {
            b = &b[..b.len() - n];
        } else {
            break;
        }
    }
    b
}

/// The provider's ids: the SHA-1 of the bytes after Go's
/// `strings.TrimSpace`.
pub(crate) fn state_hash(bytes: &[u8]) -> String {
    crate::common::hex(&sha1::Sha1::digest(trim_space(bytes)))
}

/// A public key: its PKIX DER, and its SSH type and wire blob where
/// OpenSSH has such keys.
pub(crate) struct PublicKey {
    pub der: Vec<u8>,
    ssh: Option<(String, Vec<u8>)>,
}

impl PrivateKey {
    pub(crate) fn public(&self) -> Result<PublicKey, String> {
        Ok(PublicKey {
            der: self.public_der()?,
            ssh: self.ssh_public(),
        })
    }
}

impl PublicKey {
    /// The public key an OpenSSH private key file carries in clear.
    pub(crate) fn from_openssh_private(text: &str) -> Result<PublicKey, String> {
        let bad = |why: &str| format!("failed to parse openssh private key: {why}");
        let (tag, der) = pem_block(text)?;
        if tag != "OPENSSH PRIVATE KEY" {
            return Err(bad(&format!("unexpected PEM preamble {tag}")));
        }
        let mut r = Reader(
            der.strip_prefix(b"openssh-key-v1\0")
                .ok_or_else(|| bad("not openssh-key-v1"))?,
        );
        for _ in 0..3 {
            r.string().ok_or_else(|| bad("truncated header"))?;
        }
        r.u32().ok_or_else(|| bad("truncated header"))?;
        let blob = r.string().ok_or_else(|| bad("no public key"))?.to_vec();
        let mut b = Reader(&blob);
        let name =
            String::from_utf8_lossy(b.string().ok_or_else(|| bad("no key type"))?).into_owned();
        let der = match name.as_str() {
            "ssh-rsa" => {
                let e = rsa::BigUint::from_bytes_be(b.string().ok_or_else(|| bad("no exponent"))?);
                let n = rsa::BigUint::from_bytes_be(b.string().ok_or_else(|| bad("no modulus"))?);
                rsa::RsaPublicKey::new(n, e)
                    .map_err(|e| bad(&e.to_string()))?
                    .to_public_key_der()
            }
            "ssh-ed25519" => {
                let bytes: [u8; 32] = b
                    .string()
                    .and_then(|k| k.try_into().ok())
                    .ok_or_else(|| bad("bad ed25519 key"))?;
                ed25519_dalek::VerifyingKey::from_bytes(&bytes)
                    .map_err(|e| bad(&e.to_string()))?
                    .to_public_key_der()
            }
            _ => {
                b.string().ok_or_else(|| bad("no curve"))?;
                let point = b.string().ok_or_else(|| bad("no point"))?;
                match name.as_str() {
                    "ecdsa-sha2-nistp256" => p256::PublicKey::from_sec1_bytes(point)
                        .map_err(|e| bad(&e.to_string()))?
                        .to_public_key_der(),
                    "ecdsa-sha2-nistp384" => p384::PublicKey::from_sec1_bytes(point)
                        .map_err(|e| bad(&e.to_string()))?
                        .to_public_key_der(),
                    "ecdsa-sha2-nistp521" => p521::PublicKey::from_sec1_bytes(point)
                        .map_err(|e| bad(&e.to_string()))?
                        .to_public_key_der(),
                    other => return Err(bad(&format!("unsupported key type {other}"))),
                }
            }
        };
        let der = der.map_err(|e| bad(&e.to_string()))?;
        Ok(PublicKey {
            der: der.as_bytes().to_vec(),
            ssh: Some((name, blob)),
        })
    }

    /// `RSA`, `ECDSA` or `ED25519`, from the key's algorithm identifier.
    pub(crate) fn algorithm(&self) -> &'static str {
        match self.ssh.as_ref().map(|(n, _)| n.as_str()) {
            Some("ssh-rsa") => "RSA",
            Some("ssh-ed25519") => "ED25519",
            Some(_) => "ECDSA",
            // P224, the one key without an SSH form.
            None => "ECDSA",
        }
    }

    /// `id` (SHA-1 of the DER, as the provider hashes it), PEM, OpenSSH
    /// form and fingerprints (empty where OpenSSH has no such key).
    pub(crate) fn attributes(&self) -> Vec<(&'static str, String)> {
        let id = state_hash(&self.der);
        let (ssh, md5, sha256) = match &self.ssh {
            Some((name, blob)) => {
                let md5 = md5::Md5::digest(blob)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<Vec<_>>()
                    .join(":");
                (
                    format!("{name} {}\n", STANDARD.encode(blob)),
                    md5,
                    format!(
                        "SHA256:{}",
                        STANDARD_NO_PAD.encode(sha2::Sha256::digest(blob))
                    ),
                )
            }
            None => Default::default(),
        };
        vec![
            ("id", id),
            ("public_key_pem", pem("PUBLIC KEY", &self.der)),
            ("public_key_openssh", ssh),
            ("public_key_fingerprint_md5", md5),
            ("public_key_fingerprint_sha256", sha256),
        ]
    }
}

/// Reads SSH's wire format.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn u32(&mut self) -> Option<u32> {
        let (n, rest) = self.0.split_first_chunk::<4>()?;
        self.0 = rest;
        Some(u32::from_be_bytes(*n))
    }

    fn string(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        let s = self.0.get(..n)?;
        self.0 = &self.0[n..];
        Some(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_reads_back_from_each_of_its_forms() {
        for (algorithm, curve) in [
            ("RSA", ""),
            ("ECDSA", "P224"),
            ("ECDSA", "P256"),
            ("ECDSA", "P384"),
            ("ECDSA", "P521"),
            ("ED25519", ""),
        ] {
            let key = PrivateKey::generate(algorithm, 2048, curve).expect("generated");
            let der = key.public_der().expect("public");
            for text in [key.pem().expect("pem"), key.pkcs8_pem().expect("pkcs8")] {
                let back = PrivateKey::from_pem(&text).expect("parsed");
                assert_eq!(
                    back.public_der().expect("public"),
                    der,
                    "{algorithm} {curve}"
                );
                assert_eq!(back.algorithm(), algorithm);
            }
            let ssh = key.openssh().expect("openssh");
            assert_eq!(ssh.is_empty(), curve == "P224", "{algorithm} {curve}");
            let public = key.public().expect("public");
            let attrs = public.attributes();
            assert_eq!(attrs[0].1.len(), 40, "a SHA-1 id");
            assert_eq!(public.algorithm(), algorithm);
            if !ssh.is_empty() {
                let read = PublicKey::from_openssh_private(&ssh).expect("openssh read");
                assert_eq!(read.attributes(), attrs, "{algorithm} {curve}");
            }
        }
    }

    #[test]
    fn pem_blocks_are_gos() {
        let text = pem("X", &[0u8; 60]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[1].len(), 64);
        assert_eq!(
            pem_block(&text).expect("block"),
            ("X".to_string(), vec![0u8; 60])
        );
    }

    #[test]
    fn trim_space_is_gos() {
        assert_eq!(trim_space(b" \x30\x01\x20"), b"\x30\x01");
        assert_eq!(trim_space(b"\x30\xc2\xa0"), b"\x30");
        assert_eq!(trim_space(b"\x30\xff"), b"\x30\xff");
    }

    #[test]
    fn mpints_carry_a_sign_byte() {
        let mut out = Vec::new();
        mpint(&mut out, &[0x00, 0x80, 0x01]);
        assert_eq!(out, [0, 0, 0, 3, 0, 0x80, 0x01]);
        let mut zero = Vec::new();
        mpint(&mut zero, &[0, 0]);
        assert_eq!(zero, [0, 0, 0, 0]);
    }
}
