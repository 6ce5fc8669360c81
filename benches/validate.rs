//! Validation speed on a 20-action plan (`examples/plans/twenty-actions.json`), in process.
//!
//! Run with `cargo bench --bench validate`. Prints the median, 99th percentile and worst time of
//! one full parse + validate over many rounds; mission loading is done once, as `run` does.

use quartermaster::{mission, validate};
use std::time::{Duration, Instant};

const ROUNDS: usize = 2000;

fn main() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/plans/twenty-actions.json"
    );
    let bytes = std::fs::read(path).expect("example plan");
    let started = Instant::now();
    let mission = mission::load("deps", None).expect("deps mission");
    let load = started.elapsed();
    for _ in 0..100 {
        assert!(validate::validate(&bytes, &mission).is_valid());
    }
    let mut times: Vec<Duration> = (0..ROUNDS)
        .map(|_| {
            let t = Instant::now();
            let v = validate::validate(&bytes, &mission);
            let elapsed = t.elapsed();
            assert!(v.is_valid());
            elapsed
        })
        .collect();
    times.sort();
    let pick = |q: f64| times[((ROUNDS as f64 - 1.0) * q) as usize];
    println!(
        "validate 20-action plan ({} bytes), {ROUNDS} rounds: median {:?}, p99 {:?}, max {:?}; mission load {:?}",
        bytes.len(),
        pick(0.5),
        pick(0.99),
        times[ROUNDS - 1],
        load
    );
}
