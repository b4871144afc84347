//! Hash and UUID functions, over strings and over files.

use super::{def, def_var, p, str_arg, CallCtx, FnError, FuncDef};
use crate::lang::types::Type;
use crate::lang::value::Value;
use base64::Engine as _;
use sha2::Digest as _;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn b64(b: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(b)
}

type Hasher = fn(&[u8]) -> Vec<u8>;
type Encoder = fn(&[u8]) -> String;

/// (string function, file function, digest, text encoding of the digest)
const HASHES: [(&str, &str, Hasher, Encoder); 6] = [
    ("md5", "filemd5", |d| md5::Md5::digest(d).to_vec(), hex),
    ("sha1", "filesha1", |d| sha1::Sha1::digest(d).to_vec(), hex),
    (
        "sha256",
        "filesha256",
        |d| sha2::Sha256::digest(d).to_vec(),
        hex,
    ),
    (
        "sha512",
        "filesha512",
        |d| sha2::Sha512::digest(d).to_vec(),
        hex,
    ),
    (
        "base64sha256",
        "filebase64sha256",
        |d| sha2::Sha256::digest(d).to_vec(),
        b64,
    ),
    (
        "base64sha512",
        "filebase64sha512",
        |d| sha2::Sha512::digest(d).to_vec(),
        b64,
    ),
];

fn by_name(name: &str) -> (Hasher, Encoder) {
    HASHES
        .iter()
        .find(|h| h.0 == name || h.1 == name)
        .map(|h| (h.2, h.3))
        .unwrap_or((|d| d.to_vec(), hex))
}

macro_rules! hash_fns {
    ($defs:ident, $($name:literal, $file:literal;)*) => {$(
        $defs.push(def($name, vec![p("str", Type::String)], Type::String, |_, a| {
            let (h, enc) = by_name($name);
            Ok(Value::String(enc(&h(str_arg(a, 0).as_bytes()))))
        }));
        $defs.push(def($file, vec![p("path", Type::String)], Type::String, |ctx, a| {
            let (h, enc) = by_name($file);
            let data = super::filesystem::read(ctx, str_arg(a, 0))?;
            Ok(Value::String(enc(&h(&data))))
        }));
    )*};
}

/// A UUID as Terraform makes them (hashicorp/go-uuid): 16 random bytes in
/// UUID layout, without the version and variant bits of a v4 UUID. Used by
/// `uuid()` and for `terraform_data` ids.
pub fn random_uuid() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    Ok(uuid::Uuid::from_bytes(bytes).to_string())
}

pub fn register(defs: &mut Vec<FuncDef>) {
    hash_fns!(defs,
        "md5", "filemd5";
        "sha1", "filesha1";
        "sha256", "filesha256";
        "sha512", "filesha512";
        "base64sha256", "filebase64sha256";
        "base64sha512", "filebase64sha512";
    );
    defs.push(def_var(
        "bcrypt",
        vec![p("str", Type::String)],
        p("cost", Type::Number),
        Type::String,
        |_, a| {
            if a.len() > 2 {
                return Err(FnError::call("bcrypt() takes at most two arguments"));
            }
            // Go's bcrypt quietly uses the default cost 10 below the minimum of 4.
            let cost = match a.get(1) {
                Some(_) => super::int_arg(a, 1)?,
                None => 10,
            };
            let cost = if cost < 4 { 10 } else { cost };
            if cost > 31 {
                return Err(FnError::arg(
                    1,
                    format!("crypto/bcrypt: cost {cost} is outside allowed range (4,31)"),
                ));
            }
            // Terraform (Go's x/crypto) writes the $2a$ variant.
            bcrypt::hash_with_result(str_arg(a, 0), cost as u32)
                .map(|h| Value::String(h.format_for_version(bcrypt::Version::TwoA)))
                .map_err(|e| FnError::call(e.to_string()))
        },
    ));
    defs.push(def("uuid", vec![], Type::String, |_: &mut CallCtx, _| {
        random_uuid()
            .map(Value::String)
            .map_err(|e| FnError::call(format!("no randomness available: {e}")))
    }));
    defs.push(def(
        "uuidv5",
        vec![p("namespace", Type::String), p("name", Type::String)],
        Type::String,
        |_, a| {
            let ns = match str_arg(a, 0) {
                "dns" => uuid::Uuid::NAMESPACE_DNS,
                "url" => uuid::Uuid::NAMESPACE_URL,
                "oid" => uuid::Uuid::NAMESPACE_OID,
                "x500" => uuid::Uuid::NAMESPACE_X500,
                other => uuid::Uuid::parse_str(other).map_err(|e| {
                    FnError::arg(
                        0,
                        format!("uuidv5() doesn't support namespace {other} ({e})"),
                    )
                })?,
            };
            Ok(Value::String(
                uuid::Uuid::new_v5(&ns, str_arg(a, 1).as_bytes()).to_string(),
            ))
        },
    ));
}
