//! The `--jobs` scheduler: greedy, in plan order, never two actions sharing a key at once.

use std::collections::BTreeSet;
use std::num::NonZeroUsize;

/// Misuse of the [`Scheduler`] by its caller.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ScheduleError {
    #[error("action {index} cannot finish: the plan has {count} actions")]
    Unknown { index: usize, count: usize },
    #[error("action {0} cannot finish: it is not running")]
    NotRunning(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Waiting,
    Running,
    Finished,
}

/// An action starts when a slot is free and every earlier action it shares a key with has
/// finished. Pure bookkeeping: the caller runs the actions and reports when each finishes.
#[derive(Debug, Clone)]
pub(crate) struct Scheduler {
    /// For each action, the earlier actions it shares a key with.
    after: Vec<Vec<usize>>,
    phase: Vec<Phase>,
    slots: usize,
}

impl Scheduler {
    pub(crate) fn new<K: Ord>(keys: &[BTreeSet<K>], slots: NonZeroUsize) -> Self {
        let after = keys
            .iter()
            .enumerate()
            .map(|(j, own)| (0..j).filter(|&i| !keys[i].is_disjoint(own)).collect())
            .collect();
        Self {
            after,
            phase: vec![Phase::Waiting; keys.len()],
            slots: slots.get(),
        }
    }

    /// Marks as running, and returns in plan order, every action that may start now.
    #[cfg(test)]
    pub(crate) fn start(&mut self) -> Vec<usize> {
        std::iter::from_fn(|| self.start_one()).collect()
    }

    /// Marks as running, and returns, the first action in plan order that may start now.
    pub(crate) fn start_one(&mut self) -> Option<usize> {
        let running = self.phase.iter().filter(|p| **p == Phase::Running).count();
        if running >= self.slots {
            return None;
        }
        let index = (0..self.phase.len()).find(|&index| {
            self.phase[index] == Phase::Waiting
                && self.after[index]
                    .iter()
                    .all(|&i| self.phase[i] == Phase::Finished)
        })?;
        self.phase[index] = Phase::Running;
        Some(index)
    }

    /// Whether every action before `index` has finished.
    pub(crate) fn finished_before(&self, index: usize) -> bool {
        self.phase.iter().take(index).all(|p| *p == Phase::Finished)
    }

    /// Whether some action has not started yet.
    pub(crate) fn is_waiting(&self) -> bool {
        self.phase.contains(&Phase::Waiting)
    }

    /// Records that a running action has finished, freeing its slot and its keys.
    pub(crate) fn finish(&mut self, index: usize) -> Result<(), ScheduleError> {
        match self.phase.get(index) {
            None => Err(ScheduleError::Unknown {
                index,
                count: self.phase.len(),
            }),
            Some(Phase::Running) => {
                self.phase[index] = Phase::Finished;
                Ok(())
            }
            Some(_) => Err(ScheduleError::NotRunning(index)),
        }
    }

    /// Whether every action has finished.
    #[cfg(test)]
    pub(crate) fn is_done(&self) -> bool {
        self.phase.iter().all(|p| *p == Phase::Finished)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sets(keys: &[&[u8]]) -> Vec<BTreeSet<u8>> {
        keys.iter().map(|k| k.iter().copied().collect()).collect()
    }

    fn slots(n: usize) -> NonZeroUsize {
        NonZeroUsize::new(n).unwrap()
    }

    #[test]
    fn a_later_action_sharing_a_key_never_overtakes() {
        // 1 holds a, 2 shares a with 1 and b with 3: 3 is free of running keys but waits for 2.
        let keys = sets(&[b"a", b"ab", b"b", b"c"]);
        let mut s = Scheduler::new(&keys, slots(4));
        assert_eq!(s.start(), vec![0, 3]);
        s.finish(3).unwrap();
        assert_eq!(s.start(), Vec::<usize>::new());
        s.finish(0).unwrap();
        assert_eq!(s.start(), vec![1]);
        s.finish(1).unwrap();
        assert_eq!(s.start(), vec![2]);
        s.finish(2).unwrap();
        assert!(s.is_done());
    }

    #[test]
    fn disjoint_actions_fill_the_slots_in_plan_order() {
        let keys = sets(&[b"a", b"b", b"", b"c", b"d", b"a"]);
        let mut s = Scheduler::new(&keys, slots(3));
        assert_eq!(s.start(), vec![0, 1, 2]);
        s.finish(1).unwrap();
        assert_eq!(s.start(), vec![3]);
        s.finish(0).unwrap();
        assert_eq!(s.start(), vec![4]);
    }

    #[test]
    fn misuse_is_refused_with_a_reason() {
        let mut s = Scheduler::new(&sets(&[b"a", b"a"]), slots(2));
        assert_eq!(s.start(), vec![0]);
        let e = s.finish(1).unwrap_err();
        assert_eq!(e.to_string(), "action 1 cannot finish: it is not running");
        let e = s.finish(7).unwrap_err();
        assert_eq!(
            e.to_string(),
            "action 7 cannot finish: the plan has 2 actions"
        );
    }

    /// Runs the scheduler to the end, finishing running actions in the order `picks` chooses,
    /// and returns each action's (start, end) step.
    fn simulate(keys: &[BTreeSet<u8>], n: usize, picks: &[usize]) -> Vec<(usize, usize)> {
        let mut s = Scheduler::new(keys, slots(n));
        let mut times = vec![(usize::MAX, usize::MAX); keys.len()];
        let mut running: Vec<usize> = Vec::new();
        let mut step = 0;
        let mut picks = picks.iter().cycle();
        while !s.is_done() {
            for i in s.start() {
                times[i].0 = step;
                running.push(i);
            }
            step += 1;
            assert!(!running.is_empty(), "stalled with actions left");
            let at = picks.next().map_or(0, |p| p % running.len());
            let done = running.remove(at);
            s.finish(done).unwrap();
            times[done].1 = step;
            step += 1;
        }
        times
    }

    fn key_sets() -> impl Strategy<Value = Vec<BTreeSet<u8>>> {
        prop::collection::vec(prop::collection::btree_set(0u8..6, 0..3), 0..20)
    }

    proptest! {
        #[test]
        fn sharers_never_overlap_and_keep_plan_order(
            keys in key_sets(),
            n in 1usize..6,
            picks in prop::collection::vec(0usize..8, 1..10),
        ) {
            let times = simulate(&keys, n, &picks);
            for j in 0..keys.len() {
                for i in 0..j {
                    if !keys[i].is_disjoint(&keys[j]) {
                        prop_assert!(times[i].1 < times[j].0, "{i} and {j}: {times:?}");
                    }
                }
            }
        }

        #[test]
        fn one_job_is_plan_order(keys in key_sets(), picks in prop::collection::vec(0usize..8, 1..5)) {
            let times = simulate(&keys, 1, &picks);
            let mut order: Vec<usize> = (0..keys.len()).collect();
            order.sort_by_key(|&i| times[i].0);
            prop_assert_eq!(order, (0..keys.len()).collect::<Vec<_>>());
        }
    }
}
