//! The order a plan lists its changes in: Terraform's.

use strata_state::model::{InstanceKey, ModulePath};

use super::ResourceChange;

/// Terraform's order of changes: module, mode (data sources first), type,
/// name, key.
type OrderKey<'c> = (
    &'c ModulePath,
    bool,
    &'c str,
    &'c str,
    &'c Option<InstanceKey>,
    &'c Option<String>,
);

/// Sorts `changes` by [`order_key`], stably. A change is large (hundreds
/// of bytes), so its positions are sorted and the changes moved into them
/// in place: a stable sort of the changes themselves would copy half of
/// them (up to 8 MB) aside, at the plan's peak of memory.
pub(super) fn sort_in_order(changes: &mut [ResourceChange]) {
    let mut from: Vec<usize> = (0..changes.len()).collect();
    from.sort_by(|&a, &b| order_key(&changes[a]).cmp(&order_key(&changes[b])));
    permute(changes, &from);
}

/// Moves into each position `i` the item now at `from[i]` (`from` a
/// permutation): each cycle of it walked once, a swap per step.
fn permute<T>(items: &mut [T], from: &[usize]) {
    let mut placed = vec![false; items.len()];
    for start in 0..items.len() {
        let mut at = start;
        while !placed[at] {
            placed[at] = true;
            let next = from[at];
            if next == start {
                break;
            }
            items.swap(at, next);
            at = next;
        }
    }
}

fn order_key(c: &ResourceChange) -> OrderKey<'_> {
    let id = &c.addr.id;
    (
        &id.module,
        id.mode == strata_state::model::Mode::Managed,
        &id.type_name,
        &id.name,
        &c.addr.key,
        &c.deposed,
    )
}

#[cfg(test)]
mod tests {
    use super::permute;

    #[test]
    fn permute_moves_each_item_to_where_it_belongs() {
        // Cycles of one, two and three, and an item left where it is.
        let mut items = vec!['a', 'b', 'c', 'd', 'e', 'f'];
        let from = [1, 0, 2, 5, 3, 4];
        permute(&mut items, &from);
        assert_eq!(items, vec!['b', 'a', 'c', 'f', 'd', 'e']);
        // Against sorting directly, on a permutation of 1 000 made by a
        // fixed multiplier (coprime to 1 000).
        let shuffled: Vec<usize> = (0..1000).map(|i| (i * 617) % 1000).collect();
        let mut from: Vec<usize> = (0..shuffled.len()).collect();
        from.sort_by_key(|&i| shuffled[i]);
        let mut items = shuffled.clone();
        permute(&mut items, &from);
        assert_eq!(items, (0..1000).collect::<Vec<_>>());
    }
}
