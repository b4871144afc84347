//! `.terraform.lock.hcl`, the dependency lock file: which version of each
//! provider was chosen, under which constraints, and the checksums its
//! packages must have. Read and written as Terraform does (byte for byte
//! the same file), so either tool may run `init` in a directory.

use super::digests::Digests;
use crate::diag::{Diag, Diags, Sources};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const FILE: &str = ".terraform.lock.hcl";

/// One provider's entry.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Locked {
    pub version: String,
    /// The constraints the configuration had when the version was chosen.
    pub constraints: Option<String>,
    /// `h1:` (the unpacked package) and `zh:` (its zip) checksums.
    pub hashes: Vec<String>,
}

/// Provider address (`registry.terraform.io/hashicorp/aws`) → its entry.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LockFile {
    pub providers: BTreeMap<String, Locked>,
}

fn refused(summary: &str, detail: String) -> Diags {
    Diags::from(Diag::new("strata::init::lock", summary, detail))
}

pub fn path(dir: &Path) -> PathBuf {
    dir.join(FILE)
}

impl LockFile {
    /// The lock file in `dir`; empty when there is none.
    pub fn read(dir: &Path, sources: &mut Sources) -> Result<LockFile, Diags> {
        let file = path(dir);
        let text = match std::fs::read_to_string(&file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(LockFile::default()),
            Err(e) => {
                return Err(refused(
                    "Cannot read the dependency lock file",
                    format!("{}: {e}", file.display()),
                ))
            }
        };
        let id = sources.add(file.display().to_string(), text);
        let body = crate::syntax::parse_body(id, sources.text(id)).map_err(Diags::from)?;
        let mut ev = crate::eval::Evaluator::new(&crate::eval::EmptyScope, PathBuf::new());
        let mut out = LockFile::default();
        for block in &body.blocks {
            if block.kind != "provider" {
                continue;
            }
            let Some((address, _)) = block.labels.first() else {
                continue;
            };
            let mut get = |name: &str| -> Result<serde_json::Value, Diags> {
                match block.body.attr(name) {
                    None => Ok(serde_json::Value::Null),
                    Some(a) => {
                        let v = ev.eval(&a.expr).map_err(Diags::from)?;
                        Ok(crate::lang::json::plain_json(&v))
                    }
                }
            };
            let version = get("version")?;
            let Some(version) = version.as_str() else {
                let d = Diag::new(
                    "strata::init::lock",
                    "Invalid dependency lock file",
                    format!("The entry for {address} has no version."),
                )
                .at(block.span);
                return Err(Diags::from(d));
            };
            let hashes = get("hashes")?
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|h| h.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            let constraints = get("constraints")?.as_str().map(str::to_string);
            out.providers.insert(
                strata_state::provider_source(address),
                Locked {
                    version: version.to_string(),
                    constraints,
                    hashes,
                },
            );
        }
        Ok(out)
    }

    /// The file's text, as Terraform writes it.
    pub fn text(&self) -> String {
        let mut out = String::from(
            "# This file is maintained automatically by \"terraform init\".\n# Manual edits may be lost in future updates.\n",
        );
        for (address, locked) in &self.providers {
            out.push_str(&format!("\nprovider {address:?} {{\n"));
            let pad = if locked.constraints.is_some() {
                "     "
            } else {
                " "
            };
            out.push_str(&format!("  version{pad}= {:?}\n", locked.version));
            if let Some(c) = &locked.constraints {
                out.push_str(&format!("  constraints = {c:?}\n"));
            }
            out.push_str("  hashes = [\n");
            for h in &locked.hashes {
                out.push_str(&format!("    {h:?},\n"));
            }
            out.push_str("  ]\n}\n");
        }
        out
    }

    /// Writes the file (atomically: a lock file half written would stop
    /// every later init).
    pub fn write(&self, dir: &Path) -> Result<(), Diags> {
        let file = path(dir);
        let tmp = dir.join(format!("{FILE}.tmp"));
        std::fs::write(&tmp, self.text())
            .and_then(|()| std::fs::rename(&tmp, &file))
            .map_err(|e| {
                refused(
                    "Cannot write the dependency lock file",
                    format!("{}: {e}", file.display()),
                )
            })
    }
}

/// Terraform's `h1:` checksum of an unpacked package: SHA-256 over the
/// lines "<sha256 of file>  <relative path>\n" of its files in name order.
pub fn h1(dir: &Path) -> std::io::Result<String> {
    h1_with(dir, &mut Digests::none())
}

/// [`h1`], its files' digests taken from `digests` where they are kept.
pub fn h1_with(dir: &Path, digests: &mut Digests) -> std::io::Result<String> {
    let mut files = Vec::new();
    collect(dir, dir, &mut files)?;
    let mut hashed = Vec::with_capacity(files.len());
    for rel in files {
        let digest = digests.of(&dir.join(&rel))?;
        hashed.push((rel, digest));
    }
    Ok(h1_of(hashed))
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    super::digests::hex(&Sha256::digest(bytes))
}

/// The `h1:` checksum of a package whose files (relative paths) have
/// these SHA-256 digests (hex), however it is held.
pub fn h1_of(mut files: Vec<(String, String)>) -> String {
    use base64::Engine;
    use sha2::{Digest, Sha256};
    files.sort();
    let summary: String = files
        .iter()
        .map(|(rel, hex)| format!("{hex}  {rel}\n"))
        .collect();
    let sum = Sha256::digest(summary.as_bytes());
    format!(
        "h1:{}",
        base64::engine::general_purpose::STANDARD.encode(sum)
    )
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        // Followed like Terraform: a mirror's package may be a link.
        if std::fs::metadata(&path)?.is_dir() {
            collect(root, &path, out)?;
        } else if let Ok(rel) = path.strip_prefix(root) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_reads_back_as_written() {
        let mut lock = LockFile::default();
        lock.providers.insert(
            "registry.strata.test/strata/stratatest".into(),
            Locked {
                version: "0.1.0".into(),
                constraints: Some("0.1.0".into()),
                hashes: vec!["h1:a9hT+D/o2OZB3SGhXLtZ3gxdG48u9qCOqQQ9X+H8n7U=".into()],
            },
        );
        let text = lock.text();
        assert_eq!(
            text,
            "# This file is maintained automatically by \"terraform init\".\n# Manual edits may be lost in future updates.\n\nprovider \"registry.strata.test/strata/stratatest\" {\n  version     = \"0.1.0\"\n  constraints = \"0.1.0\"\n  hashes = [\n    \"h1:a9hT+D/o2OZB3SGhXLtZ3gxdG48u9qCOqQQ9X+H8n7U=\",\n  ]\n}\n"
        );
        let dir = std::env::temp_dir().join(format!("strata-lock-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        lock.write(&dir).unwrap();
        let back = LockFile::read(&dir, &mut Sources::default()).unwrap();
        assert_eq!(back, lock);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn h1_is_terraforms_dirhash() {
        let dir = std::env::temp_dir().join(format!("strata-h1-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("b"), "two").unwrap();
        std::fs::write(dir.join("sub/a"), "one").unwrap();
        // sha256("two") and sha256("one"), in path order, then SHA-256.
        let summary = "3fc4ccfe745870e2c0d99f71f30ff0656c8dedd41cc1d7d3d376b0dbe685e2f3  b\n7692c3ad3540bb803c020b3aee66cd8887123234ea0c6e7143c0add73ff431ed  sub/a\n";
        use base64::Engine;
        use sha2::Digest;
        let want = format!(
            "h1:{}",
            base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(summary))
        );
        assert_eq!(h1(&dir).unwrap(), want);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
