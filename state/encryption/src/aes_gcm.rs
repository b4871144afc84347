//! The `aes_gcm` method: AES-GCM with a 16-, 24- or 32-byte key, the
//! random 12-byte nonce first and the 16-byte tag last, as OpenTofu lays
//! its ciphertext out.

use aes_gcm::aead::consts::U12;
use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::aes::Aes192;
use aes_gcm::{Aes128Gcm, Aes256Gcm, AesGcm, Nonce};

const NONCE: usize = 12;

/// Why a key does not suit AES-GCM, in OpenTofu's words.
pub fn key_problem(len: usize) -> Option<String> {
    (!matches!(len, 16 | 24 | 32))
        .then(|| format!("AES-GCM requires a key length of 16, 24, or 32 bytes, got {len}"))
}

/// `data` sealed under `key` with a fresh nonce.
pub fn seal(key: &[u8], aad: &[u8], data: &[u8]) -> Result<Vec<u8>, String> {
    let mut nonce = [0u8; NONCE];
    getrandom::getrandom(&mut nonce).map_err(|e| format!("no random nonce: {e}"))?;
    let payload = Payload { msg: data, aad };
    let n = Nonce::from_slice(&nonce);
    let sealed = match key.len() {
        16 => Aes128Gcm::new_from_slice(key).map(|c| c.encrypt(n, payload)),
        24 => AesGcm::<Aes192, U12>::new_from_slice(key).map(|c| c.encrypt(n, payload)),
        _ => Aes256Gcm::new_from_slice(key).map(|c| c.encrypt(n, payload)),
    };
    let body = sealed
        .map_err(|_| key_problem(key.len()).unwrap_or_default())?
        .map_err(|_| "AES-GCM refused to encrypt".to_string())?;
    let mut out = nonce.to_vec();
    out.extend(body);
    Ok(out)
}

/// What `data` held, if `key` opens it.
pub fn open(key: &[u8], aad: &[u8], data: &[u8]) -> Result<Vec<u8>, String> {
    if data.len() < NONCE + 16 {
        return Err("the ciphertext is too short to be AES-GCM's".into());
    }
    let (nonce, body) = data.split_at(NONCE);
    let payload = Payload { msg: body, aad };
    let n = Nonce::from_slice(nonce);
    let opened = match key.len() {
        16 => Aes128Gcm::new_from_slice(key).map(|c| c.decrypt(n, payload)),
        24 => AesGcm::<Aes192, U12>::new_from_slice(key).map(|c| c.decrypt(n, payload)),
        _ => Aes256Gcm::new_from_slice(key).map(|c| c.decrypt(n, payload)),
    };
    opened
        .map_err(|_| key_problem(key.len()).unwrap_or_default())?
        .map_err(|_| {
            "message authentication failed (another key sealed it, or it was changed)".to_string()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_data_opens_only_under_its_key_and_aad() {
        for len in [16, 24, 32] {
            let key = vec![7u8; len];
            let sealed = seal(&key, b"", b"secret").unwrap();
            assert_eq!(sealed.len(), 12 + 6 + 16);
            assert_eq!(open(&key, b"", &sealed).unwrap(), b"secret");
            assert!(open(&vec![8u8; len], b"", &sealed).is_err());
            assert!(open(&key, b"other", &sealed).is_err());
        }
        let key = [1u8; 32];
        let mut sealed = seal(&key, b"", b"secret").unwrap();
        let last = sealed.len() - 1;
        sealed[last] ^= 1;
        assert!(open(&key, b"", &sealed)
            .unwrap_err()
            .contains("authentication failed"));
        assert!(open(&key, b"", &[0u8; 5]).is_err());
        assert_eq!(
            key_problem(20).unwrap(),
            "AES-GCM requires a key length of 16, 24, or 32 bytes, got 20"
        );
    }

    #[test]
    fn two_seals_of_the_same_data_differ() {
        let key = [3u8; 32];
        assert_ne!(
            seal(&key, b"", b"same").unwrap(),
            seal(&key, b"", b"same").unwrap()
        );
    }
}
