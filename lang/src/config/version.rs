//! `required_version`: the Terraform language versions a module accepts,
//! checked against the one strata implements.
//!
//! Constraints are Terraform's (go-version's): comma-separated terms, each
//! an operator (`=`, `!=`, `>`, `>=`, `<`, `<=`, `~>`, none meaning `=`)
//! and a version of up to three numbers with an optional `-prerelease`.
//! `~> 1.2` allows 1.2 and later 1.x; `~> 1.2.3` allows later 1.2.x.

use crate::diag::{Diag, Span};
use std::cmp::Ordering;

/// The Terraform language version strata implements: Terraform 1.11's
/// semantics are its oracle. `strata version` prints it.
pub const LANGUAGE: &str = "1.11.4";

#[derive(Debug, Clone, PartialEq, Eq)]
struct Version {
    parts: [u64; 3],
    /// How many numbers were written (for `~>`).
    given: usize,
    pre: Option<String>,
}

impl Version {
    fn parse(s: &str) -> Option<Version> {
        let s = s.strip_prefix('v').unwrap_or(s);
        let (nums, pre) = match s.split_once('-') {
            Some((n, p)) if !p.is_empty() => (n, Some(p.to_string())),
            Some(_) => return None,
            None => (s, None),
        };
        let nums = nums.split_once('+').map_or(nums, |(n, _)| n);
        let mut parts = [0u64; 3];
        let mut given = 0;
        for (i, n) in nums.split('.').enumerate() {
            if i >= 3 || n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            parts[i] = n.parse().ok()?;
            given = i + 1;
        }
        Some(Version { parts, given, pre })
    }

    fn cmp(&self, other: &Version) -> Ordering {
        self.parts
            .cmp(&other.parts)
            .then_with(|| match (&self.pre, &other.pre) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Greater,
                (Some(_), None) => Ordering::Less,
                (Some(a), Some(b)) => a.cmp(b),
            })
    }
}

/// Whether `have` satisfies one term.
fn term_allows(op: &str, want: &Version, have: &Version) -> bool {
    let c = have.cmp(want);
    match op {
        "" | "=" => c == Ordering::Equal,
        "!=" => c != Ordering::Equal,
        ">" => c == Ordering::Greater,
        ">=" => c != Ordering::Less,
        "<" => c == Ordering::Less,
        "<=" => c != Ordering::Greater,
        _ => {
            // `~>`: at least `want`, and the same in every number written
            // but the last.
            let fixed = want.given.saturating_sub(1).max(1);
            c != Ordering::Less && have.parts[..fixed] == want.parts[..fixed]
        }
    }
}

/// A parsed version constraint: every term must allow a version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constraint {
    terms: Vec<(String, Version)>,
}

impl Constraint {
    /// Reads `text`, or says which term is not a constraint.
    pub fn parse(text: &str) -> Result<Constraint, String> {
        let mut terms = Vec::new();
        for term in text.split(',') {
            let term = term.trim();
            let op_len = term
                .find(|c: char| c.is_ascii_alphanumeric())
                .unwrap_or(term.len());
            let op = term[..op_len].trim();
            let want = Version::parse(term[op_len..].trim())
                .filter(|_| matches!(op, "" | "=" | "!=" | ">" | ">=" | "<" | "<=" | "~>"));
            match want {
                Some(want) => terms.push((op.to_string(), want)),
                None => return Err(format!("{term:?} is not a version constraint: write an operator (=, !=, >, >=, <, <=, ~>) and a version, such as \">= 1.5\"; join several with commas.")),
            }
        }
        Ok(Constraint { terms })
    }

    /// Whether `version` satisfies every term (false when it is no version).
    pub fn allows(&self, version: &str) -> bool {
        Version::parse(version).is_some_and(|have| self.allows_version(&have))
    }

    fn allows_version(&self, have: &Version) -> bool {
        self.terms
            .iter()
            .all(|(op, want)| term_allows(op, want, have))
    }

    /// The constraint as Terraform writes it in a lock file: each term
    /// once, every version to three numbers (two for a `~>` written with
    /// one or two), ordered by version and then by operator.
    pub fn normalized(&self) -> String {
        // Terraform's order among terms of one version.
        let rank = |op: &str, given: usize| match op {
            ">" => 1,
            ">=" => 2,
            "" | "=" => 3,
            "~>" if given > 2 => 4,
            "~>" => 5,
            "<=" => 6,
            "<" => 7,
            _ => 8,
        };
        let mut terms: Vec<(usize, &Version, String)> = Vec::new();
        for (op, v) in &self.terms {
            let minor_only = op == "~>" && v.given <= 2;
            let number = match minor_only {
                true => format!("{}.{}", v.parts[0], v.parts[1]),
                false => format!("{}.{}.{}", v.parts[0], v.parts[1], v.parts[2]),
            };
            let pre = v
                .pre
                .as_deref()
                .map(|p| format!("-{p}"))
                .unwrap_or_default();
            let shown = match op.as_str() {
                "" | "=" => format!("{number}{pre}"),
                other => format!("{other} {number}{pre}"),
            };
            if !terms.iter().any(|(_, _, t)| *t == shown) {
                terms.push((rank(op, v.given), v, shown));
            }
        }
        terms.sort_by(|a, b| {
            let zero = |v: &Version| Version {
                given: 3,
                ..v.clone()
            };
            zero(a.1).cmp(&zero(b.1)).then(a.0.cmp(&b.0))
        });
        let shown: Vec<String> = terms.into_iter().map(|(_, _, t)| t).collect();
        shown.join(", ")
    }

    /// The newest of `versions` this allows, as a registry picks one: a
    /// prerelease only when a term names exactly it.
    pub fn newest<'v>(&self, versions: impl IntoIterator<Item = &'v str>) -> Option<&'v str> {
        let exact = |v: &Version| {
            self.terms
                .iter()
                .any(|(op, want)| matches!(op.as_str(), "" | "=") && want.cmp(v).is_eq())
        };
        versions
            .into_iter()
            .filter_map(|text| Version::parse(text).map(|v| (text, v)))
            .filter(|(_, v)| self.allows_version(v) && (v.pre.is_none() || exact(v)))
            .max_by(|a, b| a.1.cmp(&b.1))
            .map(|(text, _)| text)
    }
}

/// The newest of `versions` that is a release (no prerelease part).
pub fn newest_release<'v>(versions: impl IntoIterator<Item = &'v str>) -> Option<&'v str> {
    versions
        .into_iter()
        .filter_map(|text| Version::parse(text).map(|v| (text, v)))
        .filter(|(_, v)| v.pre.is_none())
        .max_by(|a, b| a.1.cmp(&b.1))
        .map(|(text, _)| text)
}

/// Checks `constraint` (written at `span`) against [`LANGUAGE`].
pub fn check(constraint: &str, span: Span) -> Result<(), Diag> {
    let parsed = Constraint::parse(constraint).map_err(|why| {
        Diag::new(
            "strata::config::required_version",
            "Invalid version constraint",
            why,
        )
        .at(span)
    })?;
    if !parsed.allows(LANGUAGE) {
        return Err(Diag::new(
            "strata::config::required_version",
            "Unsupported Terraform Core version",
            format!("This module requires Terraform {constraint:?}, and strata implements the Terraform {LANGUAGE} language (`strata version`). Use a module version written for it, or change the constraint if the module does run on {LANGUAGE}."),
        )
        .at(span));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_files_get_terraforms_normal_form() {
        let c = |t: &str| Constraint::parse(t).expect("constraint").normalized();
        assert_eq!(c(">= 5.79, >= 5.46"), ">= 5.46.0, >= 5.79.0");
        assert_eq!(c("~> 5.0, >= 5.0.0, 5.0"), ">= 5.0.0, 5.0.0, ~> 5.0");
        assert_eq!(
            c("~> 1.2.3, < 2, != 1.5.0-beta"),
            "~> 1.2.3, != 1.5.0-beta, < 2.0.0"
        );
        assert_eq!(c("0.1.0"), "0.1.0");
    }

    fn allows(c: &str, v: &str) -> bool {
        Constraint::parse(c).expect("constraint").allows(v)
    }

    #[test]
    fn a_registry_picks_the_newest_allowed_release() {
        let versions = ["1.0.0", "1.2.0", "1.10.0", "2.0.0", "2.1.0-beta1"];
        let newest = |c: &str| Constraint::parse(c).expect("constraint").newest(versions);
        assert_eq!(newest("~> 1.0"), Some("1.10.0"));
        assert_eq!(newest(">= 1.0"), Some("2.0.0"));
        assert_eq!(newest("2.1.0-beta1"), Some("2.1.0-beta1"));
        assert_eq!(newest(">= 3.0"), None);
        assert_eq!(newest_release(versions), Some("2.0.0"));
    }

    #[test]
    fn constraints_read_as_terraform_reads_them() {
        for (c, v, ok) in [
            (">= 1.5", "1.11.4", true),
            ("< 0.1.0", "1.11.4", false),
            ("~> 1.2", "1.11.4", true),
            ("~> 1.2", "2.0.0", false),
            ("~> 1.11.0", "1.11.4", true),
            ("~> 1.10.0", "1.11.4", false),
            (">= 1.3, < 2.0", "1.11.4", true),
            ("1.11.4", "1.11.4", true),
            ("!= 1.11.4", "1.11.4", false),
            (">= 1.12.0-beta1", "1.11.4", false),
            ("> 1.11.4-rc1", "1.11.4", true),
            ("~> 1", "1.11.4", true),
        ] {
            assert_eq!(allows(c, v), ok, "{c} against {v}");
        }
    }

    #[test]
    fn nonsense_is_an_error_not_a_pass() {
        let span = Span::default();
        for c in [">= one", "=> 1.0", "1.2.3.4", ""] {
            assert!(check(c, span).is_err(), "{c:?} accepted");
        }
        assert!(check(">= 1.0, < 2", span).is_ok());
    }
}
