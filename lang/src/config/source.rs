//! Module source addresses, read as Terraform reads them: a local path
//! (`./net`), strata's own modules (`strata:modules/…`), a registry
//! address (`[host/]namespace/name/system[//subdir]`), or a remote package
//! (`git::https://…?ref=v1`, `github.com/org/repo`, an archive URL, an
//! absolute path), each with an optional `//subdir` inside the package.

use std::fmt;

/// Where a module call's source is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModuleSource {
    /// `./x` or `../x`, relative to the calling module.
    Local(String),
    /// `strata:modules/NAME`, built into the binary.
    Embedded(String),
    Registry(RegistryAddr),
    Remote(RemoteAddr),
}

/// `host/namespace/name/system`, and a directory inside its package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegistryAddr {
    pub host: String,
    pub namespace: String,
    pub name: String,
    pub system: String,
    pub subdir: Option<String>,
}

/// The public registry, which a registry address without a host means.
pub const PUBLIC_REGISTRY: &str = "registry.terraform.io";

impl RegistryAddr {
    /// The package, without the subdirectory: what the registry serves.
    pub fn package(&self) -> String {
        format!(
            "{}/{}/{}/{}",
            self.host, self.namespace, self.name, self.system
        )
    }
}

impl fmt::Display for RegistryAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.package())?;
        match &self.subdir {
            Some(sub) => write!(f, "//{sub}"),
            None => Ok(()),
        }
    }
}

/// How a remote package is fetched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Getter {
    Git,
    /// An HTTP(S) URL: an archive, or a page naming where the module is.
    Http,
    /// A directory on this machine (an absolute path or `file://`).
    File,
    /// Forms Terraform knows that strata does not fetch: `hg::`, `s3::`,
    /// `gcs::`.
    Other(&'static str),
}

/// A package fetched from a URL, and a directory inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteAddr {
    pub getter: Getter,
    /// The URL without the getter prefix and the subdirectory, query kept.
    pub url: String,
    pub subdir: Option<String>,
}

impl RemoteAddr {
    /// The package as Terraform names it in `Downloading … for …`.
    pub fn package(&self) -> String {
        match self.getter {
            Getter::Git => format!("git::{}", self.url),
            Getter::Other(name) => format!("{name}::{}", self.url),
            Getter::Http | Getter::File => self.url.clone(),
        }
    }
}

impl fmt::Display for RemoteAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let package = self.package();
        let Some(sub) = &self.subdir else {
            return f.write_str(&package);
        };
        // The subdirectory goes before the query: `git::u//sub?ref=v1`.
        match package.split_once('?') {
            Some((base, query)) => write!(f, "{base}//{sub}?{query}"),
            None => write!(f, "{package}//{sub}"),
        }
    }
}

impl fmt::Display for ModuleSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModuleSource::Local(p) | ModuleSource::Embedded(p) => f.write_str(p),
            ModuleSource::Registry(r) => r.fmt(f),
            ModuleSource::Remote(r) => r.fmt(f),
        }
    }
}

impl ModuleSource {
    /// Reads a `source` argument; `versioned` when the call also sets
    /// `version`, which only a registry address may have. The error is
    /// Terraform's summary and a detail.
    pub fn parse(text: &str, versioned: bool) -> Result<ModuleSource, (&'static str, String)> {
        if text.starts_with(super::EMBEDDED) {
            return Ok(ModuleSource::Embedded(text.to_string()));
        }
        let local = text.starts_with("./") || text.starts_with("../");
        if versioned {
            if local {
                return Err(("Invalid registry module source address", format!("Failed to parse module registry address: can't use local directory {text:?} as a module registry address.\n\nstrata assumed that you intended a module registry source address because you also set the argument \"version\", which applies only to registry modules.")));
            }
            return registry(text).map(ModuleSource::Registry).ok_or_else(|| {
                ("Invalid registry module source address", format!("Failed to parse module registry address: {text:?} is not a registry address (hostname/namespace/name/system).\n\nstrata assumed that you intended a module registry source address because you also set the argument \"version\", which applies only to registry modules."))
            });
        }
        if local {
            return Ok(ModuleSource::Local(text.to_string()));
        }
        if let Some(r) = registry(text) {
            return Ok(ModuleSource::Registry(r));
        }
        remote(text).map(ModuleSource::Remote).ok_or_else(|| {
            ("Invalid module source address", format!("strata failed to determine your intended installation method for remote module package {text:?}.\n\nIf you intended this as a path relative to the current module, use \"./{text}\" instead. The \"./\" prefix indicates that the address is a relative filesystem path."))
        })
    }
}

/// `[host/]namespace/name/system[//subdir]`, or None when `text` is not
/// one (then it may still be a remote address).
fn registry(text: &str) -> Option<RegistryAddr> {
    let (package, subdir) = split_subdir(text);
    let parts: Vec<&str> = package.split('/').collect();
    let (host, rest) = match parts.len() {
        3 => (PUBLIC_REGISTRY.to_string(), &parts[..]),
        4 if is_hostname(parts[0]) => (parts[0].to_ascii_lowercase(), &parts[1..]),
        _ => return None,
    };
    // go-getter's shorthands win over the registry for these hosts.
    if matches!(host.as_str(), "github.com" | "bitbucket.org") {
        return None;
    }
    let name_ok = |s: &str| {
        let b = s.as_bytes();
        !b.is_empty()
            && b.len() <= 64
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter()
                .all(|c| c.is_ascii_alphanumeric() || *c == b'-' || *c == b'_')
    };
    let system_ok = |s: &str| {
        !s.is_empty()
            && s.len() <= 64
            && s.bytes()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    };
    if !(name_ok(rest[0]) && name_ok(rest[1]) && system_ok(rest[2])) {
        return None;
    }
    Some(RegistryAddr {
        host,
        namespace: rest[0].to_string(),
        name: rest[1].to_string(),
        system: rest[2].to_string(),
        subdir,
    })
}

/// A host name as a registry address may start with: labels of letters,
/// digits and hyphens with at least one dot, and an optional port.
fn is_hostname(s: &str) -> bool {
    let (name, port) = s.split_once(':').unwrap_or((s, ""));
    let label_ok = |l: &str| {
        !l.is_empty()
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-')
    };
    name.contains('.') && name.split('.').all(label_ok) && port.bytes().all(|c| c.is_ascii_digit())
}

/// A remote package address, with go-getter's shorthands expanded.
fn remote(text: &str) -> Option<RemoteAddr> {
    let (forced, rest) = match text.split_once("::") {
        Some((g, r)) if !g.is_empty() && g.bytes().all(|c| c.is_ascii_alphanumeric()) => {
            (Some(g), r)
        }
        _ => (None, text),
    };
    let (url, subdir) = split_subdir(rest);
    let getter = match forced {
        Some("git") => Getter::Git,
        Some("http" | "https") => Getter::Http,
        Some("file") => Getter::File,
        Some("hg") => Getter::Other("hg"),
        Some("s3") => Getter::Other("s3"),
        Some("gcs") => Getter::Other("gcs"),
        Some(_) => return None,
        None => return shorthand(&url, subdir),
    };
    Some(RemoteAddr {
        getter,
        url,
        subdir,
    })
}

/// go-getter's detectors for an address without a `getter::` prefix.
fn shorthand(url: &str, subdir: Option<String>) -> Option<RemoteAddr> {
    let at = |getter, url: String, subdir| {
        Some(RemoteAddr {
            getter,
            url,
            subdir,
        })
    };
    if url.starts_with("http://") || url.starts_with("https://") {
        let getter = match url.split('?').next().unwrap_or("").ends_with(".git") {
            true => Getter::Git,
            false => Getter::Http,
        };
        return at(getter, url.to_string(), subdir);
    }
    if url.starts_with("file://") || url.starts_with('/') {
        let url = match url.starts_with('/') {
            true => format!("file://{url}"),
            false => url.to_string(),
        };
        return at(Getter::File, url, subdir);
    }
    if let Some(rest) = url.strip_prefix("git@") {
        // git@github.com:org/repo.git → ssh://git@github.com/org/repo.git
        let (host, path) = rest.split_once(':')?;
        return at(Getter::Git, format!("ssh://git@{host}/{path}"), subdir);
    }
    for host in ["github.com/", "bitbucket.org/"] {
        let Some(path) = url.strip_prefix(host) else {
            continue;
        };
        let (path, query) = match path.split_once('?') {
            Some((p, q)) => (p, format!("?{q}")),
            None => (path, String::new()),
        };
        let parts: Vec<&str> = path.split('/').collect();
        if parts.len() < 2 || parts[..2].iter().any(|p| p.is_empty()) {
            return None;
        }
        let repo = parts[1].strip_suffix(".git").unwrap_or(parts[1]);
        // Path parts after the repository are a directory inside it.
        let subdir = match parts.len() > 2 {
            true => Some(parts[2..].join("/")),
            false => subdir,
        };
        let url = format!("https://{host}{}/{repo}.git{query}", parts[0]);
        return at(Getter::Git, url, subdir);
    }
    None
}

/// `url//sub/dir?query` → (`url?query`, `sub/dir`): the `//` after the
/// scheme's `://` starts the subdirectory.
fn split_subdir(text: &str) -> (String, Option<String>) {
    let (body, query) = match text.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (text, None),
    };
    let scheme_end = body.find("://").map_or(0, |i| i + 3);
    let with_query = |s: &str| match query {
        Some(q) => format!("{s}?{q}"),
        None => s.to_string(),
    };
    match body[scheme_end..].find("//") {
        Some(i) => {
            let cut = scheme_end + i;
            let sub = body[cut + 2..].trim_matches('/');
            let sub = (!sub.is_empty()).then(|| sub.to_string());
            (with_query(&body[..cut]), sub)
        }
        None => (with_query(body), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> String {
        ModuleSource::parse(text, false).expect(text).to_string()
    }

    #[test]
    fn addresses_read_as_terraform_reads_them() {
        for (given, read) in [
            ("./net", "./net"),
            (
                "hashicorp/consul/aws",
                "registry.terraform.io/hashicorp/consul/aws",
            ),
            (
                "terraform-aws-modules/iam/aws//modules/iam-role",
                "registry.terraform.io/terraform-aws-modules/iam/aws//modules/iam-role",
            ),
            (
                "registry.strata.test/strata/gpu/aws",
                "registry.strata.test/strata/gpu/aws",
            ),
            (
                "github.com/a/b/sub?ref=x",
                "git::https://github.com/a/b.git//sub?ref=x",
            ),
            (
                "git@github.com:a/b.git",
                "git::ssh://git@github.com/a/b.git",
            ),
            ("bitbucket.org/a/b", "git::https://bitbucket.org/a/b.git"),
            (
                "git::https://example.com/x.git//sub/dir?ref=v1&depth=1",
                "git::https://example.com/x.git//sub/dir?ref=v1&depth=1",
            ),
            (
                "https://example.com/x.tar.gz",
                "https://example.com/x.tar.gz",
            ),
            ("/opt/modules/net", "file:///opt/modules/net"),
            ("hg::http://x/y", "hg::http://x/y"),
        ] {
            assert_eq!(shown(given), read, "{given}");
        }
    }

    #[test]
    fn what_is_no_address_is_an_error() {
        for text in ["foo", "registry.strata.test/strata/greet/any?x=1", "a::b"] {
            assert!(ModuleSource::parse(text, false).is_err(), "{text}");
        }
        let (summary, _) = ModuleSource::parse("./l", true).expect_err("versioned local");
        assert_eq!(summary, "Invalid registry module source address");
        assert!(ModuleSource::parse("git::https://x/y.git", true).is_err());
    }

    #[test]
    fn the_package_leaves_the_subdirectory_out() {
        let ModuleSource::Remote(r) =
            ModuleSource::parse("git::file:///r//modules/inner?ref=v1", false).expect("git")
        else {
            panic!("not remote")
        };
        assert_eq!(r.package(), "git::file:///r?ref=v1");
        assert_eq!(r.subdir.as_deref(), Some("modules/inner"));
    }
}
