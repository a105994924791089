//! A map that keeps only its most recent insertions: the bounded memory behind every store that
//! grows with input (call ids seen, approval denials).

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// Keys with values, each kept until `capacity` newer insertions were made (or until removed).
/// Memory stays below `capacity` keys whatever is inserted or removed.
pub(crate) struct Recent<V> {
    map: HashMap<Arc<str>, (u64, V), foldhash::fast::RandomState>,
    /// Insertion order; an entry whose stamp no longer matches the map's is stale.
    order: VecDeque<(u64, Arc<str>)>,
    next: u64,
    capacity: usize,
}

impl<V> Recent<V> {
    pub(crate) fn new(capacity: usize) -> Self {
        Recent {
            map: HashMap::default(),
            order: VecDeque::new(),
            next: 0,
            capacity,
        }
    }

    /// Inserts or replaces `key`, making it the most recent, and forgets the oldest insertion
    /// beyond the capacity.
    pub(crate) fn insert(&mut self, key: Arc<str>, value: V) {
        let stamp = self.next;
        self.next += 1;
        self.map.insert(Arc::clone(&key), (stamp, value));
        self.order.push_back((stamp, key));
        while self.order.len() > self.capacity {
            let Some((stamp, key)) = self.order.pop_front() else {
                break;
            };
            if self.map.get(&key).is_some_and(|(kept, _)| *kept == stamp) {
                self.map.remove(&key);
            }
        }
    }

    pub(crate) fn contains(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    pub(crate) fn get(&self, key: &str) -> Option<&V> {
        self.map.get(key).map(|(_, value)| value)
    }

    pub(crate) fn remove(&mut self, key: &str) -> Option<V> {
        // Its place in `order` goes stale and is dropped when it reaches the front.
        self.map.remove(key).map(|(_, value)| value)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.map.len()
    }
}

#[cfg(test)]
mod tests {
    use super::Recent;

    #[test]
    fn keeps_the_most_recent_insertions_only() {
        let mut recent = Recent::new(3);
        for key in ["a", "b", "c", "d"] {
            recent.insert(key.into(), ());
        }
        assert!(!recent.contains("a"));
        assert!(recent.contains("b") && recent.contains("c") && recent.contains("d"));
        // Replacing a key makes it the most recent; its older place does not evict it.
        recent.insert("b".into(), ());
        recent.insert("e".into(), ());
        assert!(!recent.contains("c"));
        assert!(recent.contains("b") && recent.contains("d") && recent.contains("e"));
        assert_eq!(recent.len(), 3);
    }

    #[test]
    fn memory_is_bounded_under_insert_and_remove_churn() {
        let mut recent = Recent::new(4);
        for i in 0..10_000 {
            let key: std::sync::Arc<str> = format!("k{i}").into();
            recent.insert(key, i);
            assert_eq!(recent.remove(&format!("k{i}")), Some(i));
            assert!(recent.order.len() <= 4);
        }
        assert_eq!(recent.len(), 0);
        let mut nothing = Recent::new(0);
        nothing.insert("a".into(), ());
        assert!(!nothing.contains("a"), "a capacity of 0 keeps nothing");
    }
}
