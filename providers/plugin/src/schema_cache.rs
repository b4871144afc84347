//! A provider's schemas kept on disk, one file per package, named by the
//! package's checksum: the second run of a provider asks it for nothing
//! before it is needed (the AWS provider's schema is 13.6 MB, and the
//! process that makes it some hundreds), and a new package — another
//! version, or a changed binary — has another name, so a schema is never
//! taken for a package it does not belong to.
//!
//! The file holds the provider's own answers packed
//! ([`crate::packed`]): the form a just-asked schema takes in memory too,
//! so what is read back converts exactly as an answer from the process.

use std::path::{Path, PathBuf};

/// Where one package's schemas are kept.
#[derive(Debug, Clone)]
pub struct SchemaCache {
    path: PathBuf,
    package: String,
}

impl SchemaCache {
    /// The file in `dir` for the package whose checksum is `package_hash`
    /// (`h1:…`; its `/`, `+` and `=` made safe for a file name).
    pub fn at(dir: &Path, package_hash: &str) -> SchemaCache {
        let name: String = package_hash
            .chars()
            .map(|c| match c {
                '/' => '_',
                '+' => '-',
                ':' | '=' => '.',
                c => c,
            })
            .collect();
        SchemaCache {
            path: dir.join(format!("{name}.schema")),
            package: package_hash.to_string(),
        }
    }

    /// The package's checksum.
    pub fn package(&self) -> &str {
        &self.package
    }

    /// Whether a file is kept for the package (whole or not).
    pub fn exists(&self) -> bool {
        self.path.is_file()
    }

    /// The packed schemas kept, when there is a file of them (whether
    /// it is whole is [`crate::packed::Packed::read`]'s to say).
    pub(crate) fn read(&self) -> Option<Vec<u8>> {
        std::fs::read(&self.path).ok()
    }

    /// Keeps the packed schemas, written beside and renamed over so that
    /// a reader (or a kill) never sees half a file. A cache: a failure
    /// only costs the next run the provider's answer.
    pub(crate) fn write(&self, bytes: &[u8]) {
        let staging = self
            .path
            .with_extension(format!("{}.tmp", std::process::id()));
        let written = self
            .path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&staging, bytes))
            .and_then(|()| std::fs::rename(&staging, &self.path));
        if written.is_err() {
            let _ = std::fs::remove_file(&staging);
        }
    }
}
