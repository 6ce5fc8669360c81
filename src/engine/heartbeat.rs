//! A line every half minute while a command runs, so that a long test run in a CI log is seen to
//! be alive (and how long it has taken), not mistaken for a hang.

use crate::ci::progress::Progress;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How often a running command is said to be running.
pub(crate) const EVERY: Duration = Duration::from_secs(30);

/// Runs `work`, saying on `progress` every [`EVERY`] that `what` still runs.
pub(crate) fn while_running<T>(progress: &Progress, what: &str, work: impl FnOnce() -> T) -> T {
    every(progress, what, EVERY, work)
}

fn every<T>(progress: &Progress, what: &str, period: Duration, work: impl FnOnce() -> T) -> T {
    let (done, stop) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let started = Instant::now();
            while let Err(RecvTimeoutError::Timeout) = stop.recv_timeout(period) {
                let elapsed = Duration::from_secs(started.elapsed().as_secs());
                progress.step(&format!(
                    "… `{what}` still running ({})",
                    humantime::format_duration(elapsed)
                ));
            }
        });
        let result = work();
        drop(done);
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[test]
    fn a_long_command_is_said_to_run_until_it_ends() {
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        let progress = Progress::to(move |l| sink.lock().unwrap().push(l.to_string()));
        let answer = every(&progress, "cargo test", Duration::from_millis(200), || {
            std::thread::sleep(Duration::from_millis(1100));
            42
        });
        assert_eq!(answer, 42);
        let said = lines.lock().unwrap().clone();
        assert!((4..=6).contains(&said.len()), "{said:?}");
        assert!(
            said[0].starts_with("      … `cargo test` still running ("),
            "{said:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(
            lines.lock().unwrap().len(),
            said.len(),
            "no line after the end"
        );
        let quick = every(&progress, "true", Duration::from_secs(30), || "done");
        assert_eq!((quick, lines.lock().unwrap().len()), ("done", said.len()));
    }
}
