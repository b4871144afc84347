//! The `archive` provider (hashicorp/archive): the `archive_file` data
//! source, a zip or tar.gz of a file, a directory, some text or `source` blocks,
//! with the provider's order (a directory walked in name order, `source`
//! blocks sorted by file name), no modification times, the files' modes
//! or `output_file_mode`, and the provider's checksums. The entries are
//! the provider's; the deflated bytes are zlib's, not Go's, so the
//! checksums differ from the real provider's for the same input.

use crate::common::{boolean, failed, get, invalid, string, with, Digests};
use crate::provider::{DataSource, Provider};
use async_trait::async_trait;
use std::io::Write;
use std::path::{Path, PathBuf};
use strata_provider::values::{block, blocks, strings};
use strata_provider::{AttributeSchema, BlockNesting, DriverError, Problem, ResourceSchema};
use strata_value::types::Type;
use strata_value::value::Value;
use zip::write::SimpleFileOptions;

pub(crate) fn provider() -> Provider {
    Provider::new("archive", "hashicorp/archive").data_source("archive_file", ArchiveFile)
}

struct ArchiveFile;

fn read_failed(detail: String) -> DriverError {
    failed("archive_file", "read", detail)
}

/// One entry: its name in the archive, its bytes, its mode if known.
struct Entry {
    name: String,
    content: Vec<u8>,
    mode: Option<u32>,
}

#[cfg(unix)]
fn mode_of(meta: &std::fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    Some(meta.permissions().mode() & 0o7777)
}

#[cfg(not(unix))]
fn mode_of(_meta: &std::fs::Metadata) -> Option<u32> {
    None
}

fn file_entry(path: &Path, name: String) -> Result<Entry, String> {
    let meta = std::fs::metadata(path)
        .map_err(|e| format!("could not archive missing file: {}: {e}", path.display()))?;
    if meta.is_dir() {
        return Err(format!(
            "error reading file: {} is a directory",
            path.display()
        ));
    }
    let content =
        std::fs::read(path).map_err(|e| format!("error reading file for archival: {e}"))?;
    Ok(Entry {
        name,
        content,
        mode: mode_of(&meta),
    })
}

/// What to leave out of a directory.
struct Walk {
    excludes: Vec<glob::Pattern>,
    skip_linked_dirs: bool,
}

impl Walk {
    fn excluded(&self, name: &str) -> bool {
        let options = glob::MatchOptions {
            require_literal_separator: true,
            ..Default::default()
        };
        self.excludes.iter().any(|p| p.matches_with(name, options))
    }

    /// The files under `dir`, named from `base`, in name order; linked
    /// directories followed unless asked not to.
    fn files(&self, dir: &Path, base: &str, out: &mut Vec<Entry>) -> Result<(), String> {
        self.files_within(dir, base, out, &mut Vec::new())
    }

    /// [`Walk::files`], `within` the directories being walked (as their
    /// real paths): a link back into one of them is an error, not a walk
    /// without end.
    fn files_within(
        &self,
        dir: &Path,
        base: &str,
        out: &mut Vec<Entry>,
        within: &mut Vec<PathBuf>,
    ) -> Result<(), String> {
        let real = std::fs::canonicalize(dir)
            .map_err(|e| format!("error encountered during file walk: {}: {e}", dir.display()))?;
        if within.contains(&real) {
            return Err(format!(
                "error archiving directory: {} links back into a directory it is in",
                dir.display()
            ));
        }
        within.push(real);
        let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| format!("error encountered during file walk: {e}"))?
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<_, _>>()
            .map_err(|e| format!("error encountered during file walk: {e}"))?;
        names.sort();
        for path in names {
            let leaf = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let name = if base.is_empty() {
                leaf
            } else {
                format!("{base}/{leaf}")
            };
            if self.excluded(&name) {
                continue;
            }
            let linked = std::fs::symlink_metadata(&path)
                .map(|m| m.file_type().is_symlink())
                .unwrap_or(false);
            if path.is_dir() {
                if !(linked && self.skip_linked_dirs) {
                    self.files_within(&path, &name, out, within)?;
                }
            } else {
                out.push(file_entry(&path, name)?);
            }
        }
        within.pop();
        Ok(())
    }
}

/// The entries the configuration asks for.
fn entries(config: &Value) -> Result<Vec<Entry>, String> {
    if let Some(dir) = string(config, "source_dir") {
        let walk = Walk {
            excludes: strings(config, "excludes")
                .iter()
                .filter(|e| !e.is_empty())
                .map(|e| {
                    glob::Pattern::new(e)
                        .map_err(|err| format!("error checking excludes matches: {e}: {err}"))
                })
                .collect::<Result<_, _>>()?,
            skip_linked_dirs: boolean(config, "exclude_symlink_directories").unwrap_or(false),
        };
        if !Path::new(&dir).is_dir() {
            return Err(format!(
                "error archiving directory: could not archive missing directory: {dir}"
            ));
        }
        let mut out = Vec::new();
        walk.files(Path::new(&dir), "", &mut out)?;
        if out.is_empty() {
            return Err(
                "error archiving directory: archive has not been created as it would be empty"
                    .to_string(),
            );
        }
        return Ok(out);
    }
    if let Some(file) = string(config, "source_file") {
        let path = Path::new(&file);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        return Ok(vec![
            file_entry(path, name).map_err(|e| format!("error archiving file: {e}"))?
        ]);
    }
    if let Some(name) = string(config, "source_content_filename") {
        let content = string(config, "source_content")
            .unwrap_or_default()
            .into_bytes();
        return Ok(vec![Entry {
            name,
            content,
            mode: None,
        }]);
    }
    let mut out: Vec<Entry> = blocks(config, "source")
        .iter()
        .map(|s| Entry {
            name: string(s, "filename").unwrap_or_default(),
            content: string(s, "content").unwrap_or_default().into_bytes(),
            mode: None,
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

fn write_zip(path: &Path, entries: &[Entry], mode: Option<u32>) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("error creating {}: {e}", dir.display()))?;
    }
    let file = std::fs::File::create(path)
        .map_err(|e| format!("error creating {}: {e}", path.display()))?;
    let mut zip = zip::ZipWriter::new(file);
    for e in entries {
        let mut options = SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .last_modified_time(zip::DateTime::default());
        if let Some(m) = mode.or(e.mode) {
            options = options.unix_permissions(m);
        }
        zip.start_file(e.name.as_str(), options)
            .and_then(|()| zip.write_all(&e.content).map_err(zip::result::ZipError::Io))
            .map_err(|err| format!("error creating file inside archive: {err}"))?;
    }
    zip.finish()
        .map_err(|e| format!("error writing archive: {e}"))?;
    Ok(())
}

/// A gzipped tar of `entries`, as the provider writes one: no times, the
/// files' modes (or `mode`), entries from text without one.
fn write_tar_gz(path: &Path, entries: &[Entry], mode: Option<u32>) -> Result<(), String> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("error creating {}: {e}", dir.display()))?;
    }
    let file = std::fs::File::create(path)
        .map_err(|e| format!("error creating {}: {e}", path.display()))?;
    let gz = flate2::write::GzEncoder::new(file, flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    for e in entries {
        let mut header = tar::Header::new_gnu();
        header.set_size(e.content.len() as u64);
        header.set_mode(mode.or(e.mode).unwrap_or(0));
        header.set_mtime(0);
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut header, &e.name, e.content.as_slice())
            .map_err(|err| format!("error creating file inside archive: {err}"))?;
    }
    tar.into_inner()
        .and_then(|gz| gz.finish())
        .map_err(|e| format!("error writing archive: {e}"))?;
    Ok(())
}

const SOURCES: [&str; 4] = [
    "source_dir",
    "source_file",
    "source_content_filename",
    "source",
];

#[async_trait]
impl DataSource for ArchiveFile {
    fn schema(&self) -> ResourceSchema {
        let text = |d| AttributeSchema::optional(Type::String, d);
        let out = |ty, d| AttributeSchema::computed(ty, d);
        let mut schema = ResourceSchema::of_attributes(vec![
            (
                "type",
                AttributeSchema::required(Type::String, "The archive type: zip."),
            ),
            (
                "source_content",
                text("Text to archive, with source_content_filename."),
            ),
            (
                "source_content_filename",
                text("The name of source_content in the archive."),
            ),
            ("source_file", text("A file to archive.")),
            ("source_dir", text("A directory to archive.")),
            (
                "excludes",
                AttributeSchema::optional(
                    Type::set(Type::String),
                    "Patterns of files to leave out of source_dir.",
                ),
            ),
            (
                "exclude_symlink_directories",
                AttributeSchema::optional(Type::Bool, "Do not follow linked directories."),
            ),
            (
                "output_path",
                AttributeSchema::required(Type::String, "Where to write the archive."),
            ),
            (
                "output_file_mode",
                text("Every entry's mode, e.g. \"0666\"."),
            ),
            (
                "output_size",
                out(Type::Number, "The archive's size in bytes."),
            ),
            ("output_md5", out(Type::String, "MD5 of the archive.")),
            ("output_sha", out(Type::String, "SHA-1 of the archive.")),
            (
                "output_sha256",
                out(Type::String, "SHA-256 of the archive."),
            ),
            (
                "output_base64sha256",
                out(Type::String, "SHA-256 of the archive, base64."),
            ),
            (
                "output_sha512",
                out(Type::String, "SHA-512 of the archive."),
            ),
            (
                "output_base64sha512",
                out(Type::String, "SHA-512 of the archive, base64."),
            ),
            ("id", out(Type::String, "SHA-1 of the archive.")),
        ]);
        schema.blocks.insert(
            "source".to_string(),
            block(
                BlockNesting::Set,
                0,
                vec![
                    (
                        "content",
                        AttributeSchema::required(Type::String, "The entry's text."),
                    ),
                    (
                        "filename",
                        AttributeSchema::required(Type::String, "The entry's name."),
                    ),
                ],
            ),
        );
        schema
    }

    fn validate(&self, config: &Value) -> Vec<Problem> {
        let mut out = Vec::new();
        if let Some(t) = string(config, "type").filter(|t| t != "zip" && t != "tar.gz") {
            out.push(invalid(
                "type",
                format!("archive type not supported: {t} (zip and tar.gz are)"),
            ));
        }
        let set: Vec<&str> = SOURCES
            .iter()
            .copied()
            .filter(|s| get(config, s).is_some_and(|v| !v.is_null() && v.len() != Some(0)))
            .collect();
        if set.len() > 1 {
            out.push(invalid(
                set[1],
                format!(
                    "Attribute {:?} cannot be specified when {:?} is specified",
                    set[1], set[0]
                ),
            ));
        }
        if set.is_empty() {
            out.push(Problem {
                path: Vec::new(),
                ..invalid("", "one of source, source_content_filename, source_dir or source_file must be specified".to_string())
            });
        }
        let has = |n: &str| get(config, n).is_some_and(|v| !v.is_null());
        if has("source_content") != has("source_content_filename") {
            out.push(invalid(
                "source_content",
                "source_content and source_content_filename go together".to_string(),
            ));
        }
        if let Some(m) = string(config, "output_file_mode").filter(|m| parse_mode(m).is_none()) {
            out.push(invalid(
                "output_file_mode",
                format!("error parsing output_file_mode value: {m}"),
            ));
        }
        out
    }

    async fn read(&self, config: &Value) -> Result<Value, DriverError> {
        let output = string(config, "output_path").unwrap_or_default();
        let mode = string(config, "output_file_mode")
            .as_deref()
            .and_then(parse_mode);
        let found = entries(config).map_err(read_failed)?;
        let write = match string(config, "type").as_deref() {
            Some("tar.gz") => write_tar_gz,
            _ => write_zip,
        };
        write(Path::new(&output), &found, mode).map_err(read_failed)?;
        let bytes = std::fs::read(&output)
            .map_err(|e| read_failed(format!("error generating checksums: {e}")))?;
        let mut pairs = Digests::of(&bytes).attributes("output_", "sha");
        pairs.push(("output_size".into(), Value::int(bytes.len() as i64)));
        Ok(with(config, pairs))
    }
}

/// A mode as Go's `ParseUint(s, 0, 32)` reads it: `0644` octal, `0x1a4`
/// hexadecimal, `420` decimal.
fn parse_mode(s: &str) -> Option<u32> {
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u32::from_str_radix(h, 16).ok();
    }
    if let Some(o) = s.strip_prefix("0o").or_else(|| s.strip_prefix("0O")) {
        return u32::from_str_radix(o, 8).ok();
    }
    if s.len() > 1 && s.starts_with('0') {
        return u32::from_str_radix(&s[1..], 8).ok();
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_is_archived_in_name_order_without_the_excluded() {
        let dir = tempfile::tempdir().expect("dir");
        let src = dir.path().join("src");
        std::fs::create_dir_all(src.join("b/deep")).expect("dirs");
        std::fs::write(src.join("z.txt"), "z").expect("file");
        std::fs::write(src.join("a.txt"), "a").expect("file");
        std::fs::write(src.join("b/deep/x.pyc"), "x").expect("file");
        std::fs::write(src.join("b/keep.py"), "k").expect("file");
        let walk = Walk {
            excludes: vec![glob::Pattern::new("**/*.pyc").expect("pattern")],
            skip_linked_dirs: false,
        };
        let mut out = Vec::new();
        walk.files(&src, "", &mut out).expect("walk");
        let names: Vec<&str> = out.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["a.txt", "b/keep.py", "z.txt"]);

        let zip_path = dir.path().join("out/a.zip");
        write_zip(&zip_path, &out, Some(0o644)).expect("zip");
        let mut z =
            zip::ZipArchive::new(std::fs::File::open(&zip_path).expect("open")).expect("zip");
        assert_eq!(z.len(), 3);
        let first = z.by_index(0).expect("entry");
        assert_eq!((first.name(), first.unix_mode()), ("a.txt", Some(0o100644)));
        drop(first);
        let again = dir.path().join("again.zip");
        write_zip(&again, &out, Some(0o644)).expect("zip");
        assert_eq!(
            std::fs::read(&zip_path).ok(),
            std::fs::read(&again).ok(),
            "the same bytes every time"
        );
    }

    #[test]
    fn a_tar_gz_holds_the_entries_with_their_modes() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("a.tar.gz");
        let entries = [
            Entry {
                name: "b/x.txt".into(),
                content: b"x".to_vec(),
                mode: Some(0o600),
            },
            Entry {
                name: "y.txt".into(),
                content: b"yy".to_vec(),
                mode: None,
            },
        ];
        write_tar_gz(&path, &entries, None).expect("tar.gz");
        let gz = flate2::read::GzDecoder::new(std::fs::File::open(&path).expect("open"));
        let mut archive = tar::Archive::new(gz);
        let got: Vec<(String, u32, u64)> = archive
            .entries()
            .expect("entries")
            .map(|e| {
                let e = e.expect("entry");
                let h = e.header();
                (
                    e.path().expect("path").display().to_string(),
                    h.mode().expect("mode"),
                    h.size().expect("size"),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("b/x.txt".to_string(), 0o600, 1),
                ("y.txt".to_string(), 0, 2)
            ]
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_link_back_up_is_an_error() {
        let dir = tempfile::tempdir().expect("dir");
        std::fs::create_dir_all(dir.path().join("a")).expect("dir");
        std::os::unix::fs::symlink(dir.path(), dir.path().join("a/up")).expect("link");
        let walk = Walk {
            excludes: Vec::new(),
            skip_linked_dirs: false,
        };
        let err = walk
            .files(dir.path(), "", &mut Vec::new())
            .expect_err("a loop");
        assert!(err.contains("links back"), "{err}");
    }

    #[test]
    fn modes_read_as_go_reads_them() {
        assert_eq!(parse_mode("0644"), Some(0o644));
        assert_eq!(parse_mode("0x1a4"), Some(0o644));
        assert_eq!(parse_mode("420"), Some(420));
        assert_eq!(parse_mode("0999"), None);
    }
}
