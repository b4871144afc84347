//! Fetching a remote package into a directory, as go-getter does for
//! Terraform: git repositories through the `git` program (a ref, a
//! depth), archives over HTTP(S) (zip, tar, tar.gz), an HTTP page that
//! names where the module is (`X-Terraform-Get`, or a `terraform-get`
//! meta tag), and directories on this machine.

use super::http::{resolve, Http};
use crate::config::source::{Getter, ModuleSource, RemoteAddr};
use std::io::Read;
use std::path::Path;
use std::process::Command;

/// How many pages naming other places are followed before giving up.
const MAX_REDIRECTS: usize = 5;

/// Fetches `addr`'s package into `dest` (which must not exist yet).
pub fn package(http: &Http<'_>, addr: &RemoteAddr, dest: &Path) -> Result<(), String> {
    fetch(http, addr, dest, 0)
}

fn fetch(http: &Http<'_>, addr: &RemoteAddr, dest: &Path, hops: usize) -> Result<(), String> {
    match addr.getter {
        Getter::Git => git(&addr.url, dest),
        Getter::File => link_local(&addr.url, dest),
        Getter::Http => over_http(http, &addr.url, dest, hops),
        Getter::Other(name) => Err(format!("strata does not fetch {name}:: sources; install the module another way and refer to it by a local path, or use a git, HTTP or registry source")),
    }
}

/// The query parameters of `url`, and `url` without them.
fn query(url: &str) -> (String, Vec<(String, String)>) {
    let Some((base, q)) = url.split_once('?') else {
        return (url.to_string(), Vec::new());
    };
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .into_owned()
    };
    let params = q
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect();
    (base.to_string(), params)
}

fn git(url: &str, dest: &Path) -> Result<(), String> {
    let (repo, params) = query(url);
    let mut reference = None;
    let mut depth = None;
    for (k, v) in params {
        match k.as_str() {
            "ref" => reference = Some(v),
            "depth" => depth = Some(v),
            other => return Err(format!("the git source parameter {other:?} is not supported by strata (only ref and depth)")),
        }
    }
    let mut clone = Command::new("git");
    clone.arg("clone").arg("--quiet");
    if let Some(d) = &depth {
        clone.arg("--depth").arg(d);
        // A shallow clone has only the ref it was made at.
        if let Some(r) = &reference {
            clone.arg("--branch").arg(r);
        }
    }
    clone.arg("--").arg(&repo).arg(dest);
    run_git(clone, &repo)?;
    if let (Some(r), None) = (&reference, &depth) {
        let mut checkout = Command::new("git");
        checkout
            .arg("-C")
            .arg(dest)
            .args(["checkout", "--quiet", r]);
        run_git(checkout, &repo)?;
    }
    let mut submodules = Command::new("git");
    submodules.arg("-C").arg(dest).args([
        "submodule",
        "update",
        "--quiet",
        "--init",
        "--recursive",
    ]);
    run_git(submodules, &repo)
}

fn run_git(mut cmd: Command, repo: &str) -> Result<(), String> {
    // Never wait on a password prompt: CI has no one to answer it.
    cmd.env("GIT_TERMINAL_PROMPT", "0");
    let out = cmd
        .output()
        .map_err(|e| format!("error downloading {repo:?}: cannot run git: {e}"))?;
    match out.status.success() {
        true => Ok(()),
        false => Err(format!(
            "error downloading {repo:?}: git exited with {}: {}",
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

/// A directory on this machine, linked where the module goes, as
/// Terraform's file getter links it (a copy would take whatever the
/// directory holds, providers that earlier inits left in it included).
fn link_local(url: &str, dest: &Path) -> Result<(), String> {
    let path = url.strip_prefix("file://").unwrap_or(url);
    let from = Path::new(path);
    if !from.is_dir() {
        return Err(format!("{path} is not a directory"));
    }
    let from = std::fs::canonicalize(from).map_err(|e| format!("{path}: {e}"))?;
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    #[cfg(unix)]
    return std::os::unix::fs::symlink(&from, dest).map_err(|e| format!("cannot link {path}: {e}"));
    #[cfg(not(unix))]
    return copy_dir(&from, dest).map_err(|e| format!("cannot copy {path}: {e}"));
}

/// Copies a directory tree, leaving out version-control metadata; links
/// in it are copied as links.
pub fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == ".git" {
            continue;
        }
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_dir(&entry.path(), &to.join(&name))?;
        } else if kind.is_symlink() {
            copy_link(&entry.path(), &to.join(&name))?;
        } else {
            std::fs::copy(entry.path(), to.join(&name))?;
        }
    }
    Ok(())
}

#[cfg(unix)]
fn copy_link(link: &Path, to: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(std::fs::read_link(link)?, to)
}

#[cfg(not(unix))]
fn copy_link(link: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::copy(link, to).map(|_| ())
}

/// The kind of archive a URL names (`?archive=` first, then its path).
fn archive_kind(base: &str, params: &[(String, String)]) -> Option<String> {
    if let Some((_, kind)) = params.iter().find(|(k, _)| k == "archive") {
        return Some(kind.clone());
    }
    let path = base.rsplit('/').next().unwrap_or("");
    let kinds = [
        "tar.gz", "tgz", "tar.bz2", "tbz2", "tar.xz", "txz", "zip", "tar", "gz", "bz2", "xz",
    ];
    kinds
        .iter()
        .find(|k| path.ends_with(&format!(".{k}")))
        .map(|k| k.to_string())
}

fn over_http(http: &Http<'_>, url: &str, dest: &Path, hops: usize) -> Result<(), String> {
    let (base, params) = query(url);
    if let Some(kind) = archive_kind(&base, &params) {
        let rest: Vec<String> = params
            .iter()
            .filter(|(k, _)| k != "archive")
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let fetch_url = match rest.is_empty() {
            true => base,
            false => format!("{base}?{}", rest.join("&")),
        };
        let reply = http.get(&fetch_url)?;
        if reply.status != 200 {
            return Err(format!(
                "bad response code: {} from {fetch_url}",
                reply.status
            ));
        }
        return unpack(&kind, &reply.body, dest);
    }
    // A page that says where the module is.
    let sep = if url.contains('?') { '&' } else { '?' };
    let reply = http.get(&format!("{url}{sep}terraform-get=1"))?;
    if !(200..300).contains(&reply.status) {
        return Err(format!("bad response code: {} from {url}", reply.status));
    }
    let named = reply
        .header("x-terraform-get")
        .map(str::to_string)
        .or_else(|| meta_terraform_get(&String::from_utf8_lossy(&reply.body)));
    let Some(named) = named else {
        return Err(format!("{url} is no archive (.zip, .tar.gz, …) and names no module location (X-Terraform-Get header or terraform-get meta tag)"));
    };
    if hops >= MAX_REDIRECTS {
        return Err(format!(
            "{url}: more than {MAX_REDIRECTS} pages named other locations"
        ));
    }
    let relative = ["/", "./", "../"].iter().any(|p| named.starts_with(p));
    let named = if relative {
        resolve(url, &named)?
    } else {
        named
    };
    let ModuleSource::Remote(next) = ModuleSource::parse(&named, false).map_err(|(_, d)| d)? else {
        return Err(format!(
            "{url} names {named:?}, which is not a remote module package"
        ));
    };
    fetch(http, &next, dest, hops + 1)
}

/// `<meta name="terraform-get" content="…">` in an HTML page.
fn meta_terraform_get(html: &str) -> Option<String> {
    let re = regex::Regex::new(r#"<meta\s+name="terraform-get"\s+content="([^"]*)""#).ok()?;
    re.captures(html).map(|c| c[1].replace("&amp;", "&"))
}

/// How much an archive may unpack to, so an archive made to fill the
/// disk (a "zip bomb") is an error rather than a full disk.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bounds {
    pub bytes: u64,
    pub entries: usize,
}

/// A module is source text: generous for that, far from a full disk.
pub(super) const MODULE: Bounds = Bounds {
    bytes: 256 << 20,
    entries: 20_000,
};

/// A provider package is one binary (the AWS provider's is 700 MB).
pub(super) const PROVIDER: Bounds = Bounds {
    bytes: 4 << 30,
    entries: 1_000,
};

/// What an unpacking has used of its bounds.
struct Budget {
    bounds: Bounds,
    bytes: u64,
    entries: usize,
}

impl Budget {
    fn new(bounds: Bounds) -> Budget {
        Budget {
            bounds,
            bytes: 0,
            entries: 0,
        }
    }

    fn entry(&mut self) -> std::io::Result<()> {
        self.entries += 1;
        match self.entries > self.bounds.entries {
            true => Err(std::io::Error::other(format!(
                "it holds more than {} entries",
                self.bounds.entries
            ))),
            false => Ok(()),
        }
    }

    /// Copies `from` into `to`, stopping past what is left of the bounds.
    fn copy(&mut self, from: &mut impl Read, to: &mut impl std::io::Write) -> std::io::Result<()> {
        let left = self.bounds.bytes - self.bytes;
        let n = std::io::copy(&mut from.take(left + 1), to)?;
        self.bytes += n;
        match self.bytes > self.bounds.bytes {
            true => Err(std::io::Error::other(format!(
                "it unpacks to more than {} MiB",
                self.bounds.bytes >> 20
            ))),
            false => Ok(()),
        }
    }
}

/// Unpacks an archive of `kind` into `dest`; entries that would land
/// outside it are refused, links become empty files (as Terraform writes
/// them), and the whole is bounded by [`MODULE`].
fn unpack(kind: &str, bytes: &[u8], dest: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    let bad = |e: std::io::Error| format!("cannot unpack the {kind} archive: {e}");
    match kind {
        "tar.gz" | "tgz" => untar(flate2::read::GzDecoder::new(bytes), dest).map_err(bad),
        "tar" => untar(bytes, dest).map_err(bad),
        "zip" => unzip(bytes, dest, MODULE),
        other => Err(format!(
            "strata does not unpack .{other} archives; publish the module as .zip, .tar.gz or .tar"
        )),
    }
}

fn untar(reader: impl Read, dest: &Path) -> std::io::Result<()> {
    use tar::EntryType;
    let mut archive = tar::Archive::new(reader);
    archive.set_preserve_permissions(false);
    let mut budget = Budget::new(MODULE);
    for entry in archive.entries()? {
        let mut entry = entry?;
        budget.entry()?;
        let name = entry.path()?.display().to_string();
        let Some(path) = inside(dest, &entry.path()?) else {
            return Err(std::io::Error::other(format!(
                "the entry {name:?} would land outside the module directory"
            )));
        };
        match entry.header().entry_type() {
            EntryType::Directory => std::fs::create_dir_all(&path)?,
            EntryType::Regular | EntryType::Continuous => {
                let mut out = create_in(&path)?;
                budget.copy(&mut entry, &mut out)?;
            }
            // A link could make loading read (or a later unpacking write)
            // outside the module: written as an empty file, as Terraform
            // writes it.
            EntryType::Symlink | EntryType::Link => drop(create_in(&path)?),
            // Devices, pipes and the archive's own bookkeeping: nothing a
            // module is made of.
            _ => {}
        }
    }
    Ok(())
}

/// `name` under `dest`, or `None` when it is absolute or climbs out.
fn inside(dest: &Path, name: &Path) -> Option<std::path::PathBuf> {
    use std::path::Component;
    let mut out = dest.to_path_buf();
    for part in name.components() {
        match part {
            Component::Normal(p) => out.push(p),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(out)
}

/// A new file at `path`, its folders made.
fn create_in(path: &Path) -> std::io::Result<std::fs::File> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::File::create(path)
}

pub(super) fn unzip(bytes: &[u8], dest: &Path, bounds: Bounds) -> Result<(), String> {
    let bad = |e: &dyn std::fmt::Display| format!("cannot unpack the zip archive: {e}");
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| bad(&e))?;
    let mut budget = Budget::new(bounds);
    for i in 0..archive.len() {
        budget.entry().map_err(|e| bad(&e))?;
        let mut file = archive.by_index(i).map_err(|e| bad(&e))?;
        let Some(name) = file.enclosed_name() else {
            return Err(bad(&format!(
                "the entry {:?} would land outside the module directory",
                file.name()
            )));
        };
        let path = dest.join(name);
        if file.is_dir() {
            std::fs::create_dir_all(&path).map_err(|e| bad(&e))?;
            continue;
        }
        let mut out = create_in(&path).map_err(|e| bad(&e))?;
        // A link is stored as its target's text: written as an empty file,
        // as from a tar archive.
        if file.is_symlink() {
            continue;
        }
        budget.copy(&mut file, &mut out).map_err(|e| bad(&e))?;
        // A provider's binary must stay executable.
        #[cfg(unix)]
        if let Some(mode) = file.unix_mode() {
            use std::os::unix::fs::PermissionsExt;
            let perms = std::fs::Permissions::from_mode(mode & 0o777);
            std::fs::set_permissions(&path, perms).map_err(|e| bad(&e))?;
        }
    }
    Ok(())
}
