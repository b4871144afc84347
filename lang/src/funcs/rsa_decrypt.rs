//! `rsadecrypt(ciphertext, privatekey)`: RSA PKCS #1 v1.5 decryption of a
//! base64 text with a PEM private key (PKCS #1 `RSA PRIVATE KEY` or
//! PKCS #8 `PRIVATE KEY`) — what reads the Windows password EC2 encrypts
//! with an instance's key pair.

use super::{def, p, str_arg, FnError, FuncDef};
use crate::lang::types::Type;
use crate::lang::value::Value;
use base64::Engine as _;
use rsa::pkcs1::DecodeRsaPrivateKey as _;
use rsa::pkcs8::DecodePrivateKey as _;

pub fn register(defs: &mut Vec<FuncDef>) {
    defs.push(def(
        "rsadecrypt",
        vec![p("ciphertext", Type::String), p("privatekey", Type::String)],
        Type::String,
        |_, a| {
            let text = str_arg(a, 0);
            let sealed = base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|_| {
                    FnError::arg(
                        0,
                        format!(
                            "failed to decode input {text:?}: cipher text must be base64-encoded"
                        ),
                    )
                })?;
            let pem = str_arg(a, 1);
            let key = rsa::RsaPrivateKey::from_pkcs1_pem(pem)
                .or_else(|_| rsa::RsaPrivateKey::from_pkcs8_pem(pem))
                .map_err(|e| {
                    let why = match pem.contains("-----BEGIN") {
                        true => e.to_string(),
                        false => "no key found".into(),
                    };
                    FnError::arg(1, format!("invalid private key: {why}"))
                })?;
            let opened = key
                .decrypt(rsa::Pkcs1v15Encrypt, &sealed)
                .map_err(|e| FnError::call(format!("failed to decrypt: {e}")))?;
            Ok(Value::String(String::from_utf8_lossy(&opened).into_owned()))
        },
    ));
}
