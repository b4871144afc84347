//! Ownership tags: everything the driver creates carries `strata:address`
//! and `strata:lineage`, so a run that died between "AWS made it" and "the
//! state has it" can be found again. They are added on create and kept out
//! of `tags` / `tags_all` when reading, so they never show in a diff.

use std::collections::BTreeMap;
use strata_provider::Tags;

pub const ADDRESS: &str = "strata:address";
pub const LINEAGE: &str = "strata:lineage";

/// The user's tags plus the ownership tags.
pub fn with_ownership(user: &BTreeMap<String, String>, t: &Tags) -> BTreeMap<String, String> {
    let mut all = user.clone();
    all.insert(ADDRESS.into(), t.address.clone());
    all.insert(LINEAGE.into(), t.lineage.clone());
    all
}

/// What the user sees: everything but the ownership tags.
pub fn visible(all: impl IntoIterator<Item = (String, String)>) -> BTreeMap<String, String> {
    all.into_iter()
        .filter(|(k, _)| k != ADDRESS && k != LINEAGE)
        .collect()
}

/// The keys to remove and the pairs to set to go from `had` to `want`
/// (ownership tags are never touched).
pub fn changes(
    had: &BTreeMap<String, String>,
    want: &BTreeMap<String, String>,
) -> (Vec<String>, BTreeMap<String, String>) {
    let remove = had
        .keys()
        .filter(|k| !want.contains_key(*k))
        .cloned()
        .collect();
    let set = want
        .iter()
        .filter(|(k, v)| had.get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    (remove, set)
}
