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

/// Checks `constraint` (written at `span`) against [`LANGUAGE`].
pub fn check(constraint: &str, span: Span) -> Result<(), Diag> {
    let have = Version::parse(LANGUAGE).unwrap_or(Version {
        parts: [0; 3],
        given: 3,
        pre: None,
    });
    for term in constraint.split(',') {
        let term = term.trim();
        let op_len = term
            .find(|c: char| c.is_ascii_alphanumeric())
            .unwrap_or(term.len());
        let op = term[..op_len].trim();
        let want = Version::parse(term[op_len..].trim())
            .filter(|_| matches!(op, "" | "=" | "!=" | ">" | ">=" | "<" | "<=" | "~>"));
        let Some(want) = want else {
            return Err(Diag::new(
                "strata::config::required_version",
                "Invalid version constraint",
                format!("{term:?} is not a version constraint: write an operator (=, !=, >, >=, <, <=, ~>) and a version, such as \">= 1.5\"; join several with commas."),
            )
            .at(span));
        };
        if !term_allows(op, &want, &have) {
            return Err(Diag::new(
                "strata::config::required_version",
                "Unsupported Terraform Core version",
                format!("This module requires Terraform {constraint:?}, and strata implements the Terraform {LANGUAGE} language (`strata version`). Use a module version written for it, or change the constraint if the module does run on {LANGUAGE}."),
            )
            .at(span));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allows(c: &str, v: &str) -> bool {
        let have = Version::parse(v).expect("version");
        c.split(',').all(|t| {
            let t = t.trim();
            let i = t
                .find(|c: char| c.is_ascii_alphanumeric())
                .unwrap_or(t.len());
            let want = Version::parse(t[i..].trim()).expect("term");
            term_allows(t[..i].trim(), &want, &have)
        })
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
