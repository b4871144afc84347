//! Ownership marks in the form the strictest cloud accepts. GCP label
//! values allow only lowercase letters, digits, `_` and `-`, at most 63
//! characters, so the address (`module.net.google_compute_network.main`)
//! is carried as a hash; the lineage, a lowercase UUID, as it is. Types
//! with no labels at all carry the same facts in their description
//! ([`marker`]), which strata reads back as "not set".

use sha2::{Digest, Sha256};
use strata_provider::Tags;

pub const ADDRESS: &str = "strata-address";
pub const LINEAGE: &str = "strata-lineage";

/// The labels that mark an object as created for `tags`.
pub fn labels(tags: &Tags) -> [(String, String); 2] {
    [
        (ADDRESS.to_string(), address_hash(&tags.address)),
        (LINEAGE.to_string(), tags.lineage.to_ascii_lowercase()),
    ]
}

/// Whether `get` (a label lookup) shows the object was created for `tags`.
pub fn owned<'a>(get: impl Fn(&str) -> Option<&'a str>, tags: &Tags) -> bool {
    labels(tags).iter().all(|(k, v)| get(k) == Some(v.as_str()))
}

/// Whether a label key is one of strata's own (hidden from `labels`).
pub fn is_ownership(key: &str) -> bool {
    key == ADDRESS || key == LINEAGE
}

fn address_hash(address: &str) -> String {
    let digest = Sha256::digest(address.as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// The description of an object that has no labels, when the
/// configuration sets none: the same facts, readable.
pub fn marker(tags: &Tags) -> String {
    format!(
        "Managed by strata: {} (lineage {})",
        tags.address, tags.lineage
    )
}

/// Whether a description is a strata marker (of any address).
pub fn is_marker(description: &str) -> bool {
    description.starts_with("Managed by strata: ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_fit_gcp_rules_and_identify_the_instance() {
        let t = Tags {
            address: "module.train_gcp.google_container_node_pool.pool[\"h100\"]".into(),
            lineage: "0F3E2B1C-1111-4222-8333-944455556666".into(),
        };
        for (k, v) in labels(&t) {
            for s in [&k, &v] {
                assert!(s.len() <= 63, "{s}");
                assert!(
                    s.chars().all(|c| c.is_ascii_lowercase()
                        || c.is_ascii_digit()
                        || c == '-'
                        || c == '_'),
                    "{s}"
                );
            }
        }
        let map: std::collections::BTreeMap<_, _> = labels(&t).into_iter().collect();
        assert!(owned(|k| map.get(k).map(String::as_str), &t));
        let other = Tags {
            address: "module.train_gcp.google_container_node_pool.pool[\"a100\"]".into(),
            ..t.clone()
        };
        assert!(!owned(|k| map.get(k).map(String::as_str), &other));
        assert!(is_marker(&marker(&t)));
    }
}
