//! OpenTofu's `external` key provider and `external` method (OpenTofu
//! 1.10): a program the configuration names, run once per use. It first
//! writes a header line (`{"magic": …, "version": 1}`), then its answer as
//! JSON on standard output; what it needs comes on standard input. Held
//! to OpenTofu's `keyprovider/external` and `method/external` (their
//! `protocol/*.schema.json`): a key provider is given `null` to make a key
//! (and may keep `external_data` in the metadata) or the metadata it left
//! to give the key back; a method is given the key and the payload, both
//! base64, and answers with the payload. A program that runs past a
//! minute is stopped, as OpenTofu stops it.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde::{Deserialize, Serialize};
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const KEY_PROVIDER_MAGIC: &str = "OpenTofu-External-Key-Provider";
const METHOD_MAGIC: &str = "OpenTofu-External-Encryption-Method";
const TIMEOUT: Duration = Duration::from_secs(60);

/// `key_provider "external" "NAME" { command = [...] }`.
#[derive(Debug, Clone)]
pub struct ExternalKeys {
    pub command: Vec<String>,
}

/// What the key provider keeps beside the sealed document, as OpenTofu
/// writes it: `{"external_data": …}` (null when the program kept nothing).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metadata {
    #[serde(default)]
    pub external_data: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeysOut {
    keys: KeyPair,
    meta: Metadata,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeyPair {
    encryption_key: String,
    #[serde(default)]
    decryption_key: Option<String>,
}

impl ExternalKeys {
    /// A key to seal with, and the metadata the program asked to keep.
    pub fn fresh(&self) -> Result<(Vec<u8>, Metadata), String> {
        let out = self.ask(b"null")?;
        Ok((
            decoded(&out.keys.encryption_key, "encryption_key")?,
            out.meta,
        ))
    }

    /// The key a document sealed with `meta` opens with.
    pub fn recover(&self, meta: &Metadata) -> Result<Vec<u8>, String> {
        let input = match &meta.external_data {
            None => "null".to_string(),
            Some(_) => serde_json::to_string(meta).map_err(|e| e.to_string())?,
        };
        let out = self.ask(input.as_bytes())?;
        match out.keys.decryption_key {
            Some(k) if !k.is_empty() => decoded(&k, "decryption_key"),
            _ => Err(
                "the external key provider gave no decryption key for the stored metadata".into(),
            ),
        }
    }

    fn ask(&self, input: &[u8]) -> Result<KeysOut, String> {
        let (out, stderr) = run(&self.command, KEY_PROVIDER_MAGIC, input)?;
        serde_json::from_slice(&out).map_err(|e| {
            format!("the external command returned an invalid JSON response ({e})\n\nStderr:\n-------\n{stderr}")
        })
    }
}

/// `method "external" "NAME" { encrypt_command, decrypt_command, keys }`.
#[derive(Debug, Clone)]
pub struct ExternalMethod {
    pub encrypt: Vec<String>,
    pub decrypt: Vec<String>,
}

#[derive(Serialize)]
struct MethodIn<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<String>,
    payload: &'a str,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MethodOut {
    payload: String,
}

impl ExternalMethod {
    pub fn encrypt(&self, key: Option<&[u8]>, data: &[u8]) -> Result<Vec<u8>, String> {
        self.call(&self.encrypt, key, data)
    }

    pub fn decrypt(&self, key: Option<&[u8]>, data: &[u8]) -> Result<Vec<u8>, String> {
        if data.is_empty() {
            return Err("Cannot decrypt empty data.".into());
        }
        self.call(&self.decrypt, key, data)
    }

    fn call(&self, command: &[String], key: Option<&[u8]>, data: &[u8]) -> Result<Vec<u8>, String> {
        let payload = STANDARD.encode(data);
        let input = MethodIn {
            key: key.map(|k| STANDARD.encode(k)),
            payload: &payload,
        };
        let input = serde_json::to_vec(&input).map_err(|e| e.to_string())?;
        let (out, stderr) = run(command, METHOD_MAGIC, &input)?;
        let out: MethodOut = serde_json::from_slice(&out).map_err(|e| {
            format!("external encryption method returned an invalid JSON ({e})\n\nStderr:\n-------\n{stderr}")
        })?;
        decoded(&out.payload, "payload")
    }
}

fn decoded(text: &str, field: &str) -> Result<Vec<u8>, String> {
    STANDARD
        .decode(text)
        .map_err(|e| format!("the external program's {field} is not base64: {e}"))
}

#[derive(Deserialize)]
struct Header {
    magic: String,
    version: i64,
}

/// Runs `command` with `input` on its standard input: what followed its
/// header line on standard output, and its standard error.
fn run(command: &[String], magic: &str, input: &[u8]) -> Result<(Vec<u8>, String), String> {
    let Some((program, args)) = command.split_first() else {
        return Err("no command to run".into());
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {program}: {e}"))?;
    // A program that does not read its input must not block us: written
    // from a thread of its own.
    let mut stdin = child.stdin.take();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        if let Some(s) = stdin.as_mut() {
            let _ = s.write_all(&input);
        }
    });
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut buf);
            }
            buf
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{program} did not finish within a minute and was stopped"
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(format!("cannot wait for {program}: {e}")),
        }
    };
    let _ = writer.join();
    let stdout = out.join().unwrap_or_default();
    let stderr = String::from_utf8_lossy(&err.join().unwrap_or_default()).into_owned();
    if !status.success() {
        return Err(format!(
            "the external command exited with a non-zero exit code ({status})\n\nStderr:\n-------\n{stderr}"
        ));
    }
    let text = String::from_utf8_lossy(&stdout);
    let Some((head, rest)) = text.split_once('\n') else {
        return Err(format!(
            "the external program wrote no header line\n\nStderr:\n-------\n{stderr}"
        ));
    };
    // Not strict: later protocol versions may add header fields.
    let header: Header = serde_json::from_str(head)
        .map_err(|e| format!("failed to unmarshal header from external program ({e})"))?;
    if header.magic != magic {
        return Err(format!(
            "invalid magic received from external program: {}",
            header.magic
        ));
    }
    if header.version != 1 {
        return Err(format!(
            "invalid version number received from external program: {}",
            header.version
        ));
    }
    Ok((rest.as_bytes().to_vec(), stderr))
}
