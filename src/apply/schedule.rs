//! Dependency order for the apply's work: an item is ready once everything
//! it waits for has finished, and an item something failed before is
//! poisoned, so it is reported skipped instead of done. The graph's creates
//! and updates, the deletes and the deposed objects all go through it; how
//! many driver calls run at once is the runner's business.

use std::collections::VecDeque;

/// One edge of the order: `after` may start once `before` has finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    pub before: usize,
    pub after: usize,
}

#[derive(Debug)]
pub struct Schedule {
    /// Per item, how many of the items it waits for have not finished.
    waiting: Vec<usize>,
    /// Per item, the items waiting for it (an item twice for two edges).
    successors: Vec<Vec<usize>>,
    ready: VecDeque<usize>,
    poisoned: Vec<bool>,
    unfinished: usize,
}

impl Schedule {
    /// Items `0..items` ordered by `edges`; an edge to an item out of range
    /// is ignored, and a self-edge too (an item cannot wait for itself).
    pub fn new(items: usize, edges: impl IntoIterator<Item = Edge>) -> Schedule {
        let mut waiting = vec![0; items];
        let mut successors = vec![Vec::new(); items];
        for Edge { before, after } in edges {
            if before < items && after < items && before != after {
                waiting[after] += 1;
                successors[before].push(after);
            }
        }
        let ready = (0..items).filter(|&i| waiting[i] == 0).collect();
        Schedule {
            waiting,
            successors,
            ready,
            poisoned: vec![false; items],
            unfinished: items,
        }
    }

    /// An item that may start now, in the order items became ready.
    pub fn next_ready(&mut self) -> Option<usize> {
        self.ready.pop_front()
    }

    /// Whether something this item waited for failed.
    pub fn is_poisoned(&self, item: usize) -> bool {
        self.poisoned[item]
    }

    /// Records an item finished; its waiting successors become ready, and
    /// poisoned when it failed.
    pub fn finish(&mut self, item: usize, failed: bool) {
        self.unfinished -= 1;
        for &next in &self.successors[item] {
            self.poisoned[next] |= failed;
            self.waiting[next] -= 1;
            if self.waiting[next] == 0 {
                self.ready.push_back(next);
            }
        }
    }

    /// Whether every item has finished.
    pub fn is_done(&self) -> bool {
        self.unfinished == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edges(pairs: &[(usize, usize)]) -> Vec<Edge> {
        pairs
            .iter()
            .map(|&(before, after)| Edge { before, after })
            .collect()
    }

    #[test]
    fn items_start_after_what_they_wait_for() {
        // 0 → 2, 1 → 2, 2 → 3
        let mut s = Schedule::new(4, edges(&[(0, 2), (1, 2), (2, 3)]));
        assert_eq!(s.next_ready(), Some(0));
        assert_eq!(s.next_ready(), Some(1));
        assert_eq!(s.next_ready(), None);
        s.finish(0, false);
        assert_eq!(s.next_ready(), None, "2 still waits for 1");
        s.finish(1, false);
        assert_eq!(s.next_ready(), Some(2));
        s.finish(2, false);
        assert_eq!(s.next_ready(), Some(3));
        assert!(!s.is_done());
        s.finish(3, false);
        assert!(s.is_done());
    }

    #[test]
    fn a_failure_poisons_what_waits_for_it_and_nothing_else() {
        // 0 → 1 → 2, and 3 alone
        let mut s = Schedule::new(4, edges(&[(0, 1), (1, 2)]));
        assert_eq!(s.next_ready(), Some(0));
        assert_eq!(s.next_ready(), Some(3));
        s.finish(0, true);
        assert_eq!(s.next_ready(), Some(1));
        assert!(s.is_poisoned(1));
        // A skipped item finishes failed, so the poison travels on.
        s.finish(1, true);
        assert_eq!(s.next_ready(), Some(2));
        assert!(s.is_poisoned(2));
        assert!(!s.is_poisoned(3));
    }

    #[test]
    fn repeated_self_and_stray_edges_keep_the_counts_right() {
        let mut s = Schedule::new(2, edges(&[(0, 1), (0, 1), (1, 1), (5, 0), (0, 7)]));
        assert_eq!(s.next_ready(), Some(0));
        s.finish(0, false);
        assert_eq!(s.next_ready(), Some(1));
        s.finish(1, false);
        assert!(s.is_done());
    }
}
