//! Faults both forges' APIs answer with, survived the same way: against the HTTP fakes of GitHub
//! and GitLab, each with the answer its forge really gives.

use crate::common;

use crate::on_every_forge;
use crate::{github, gitlab};
use common::fake_forge::Fault;
use common::*;
use serde_json::json;
use std::time::{Duration, Instant};

on_every_forge!(
    remote: a_server_error_before_the_forge_acts_is_retried_once_the_pr_is_known_absent,
    a_rate_limit_with_retry_after_is_waited_out,
);

fn a_server_error_before_the_forge_acts_is_retried_once_the_pr_is_known_absent(backend: Backend) {
    let f = Fixture::on(backend);
    let (create, message) = match backend {
        Backend::Github => ("/pulls", "Server Error"),
        _ => ("/merge_requests", "502 Bad Gateway"),
    };
    f.fault(Fault::new("POST", create, 502, json!({"message": message})));
    let run = f.run(&one_pr(), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    // Retried once, after looking for the PR again.
    assert_eq!(f.calls(), calls_around_a_lost_creation(backend));
    assert_eq!(f.pulls().len(), 1);
}

/// A run's requests when the first request creating its PR (MR) failed before taking effect.
fn calls_around_a_lost_creation(backend: Backend) -> Vec<(String, String)> {
    let post = |uri: &str| ("POST".to_string(), uri.to_string());
    let mut expected = match backend {
        Backend::Github => {
            let find = get(github::FIND);
            let create = post("/repos/octo/hello/pulls");
            let labels = post("/repos/octo/hello/issues/1/labels");
            vec![find.clone(), create.clone(), find, create, labels]
        }
        _ => {
            let create = post("/api/v4/projects/42/merge_requests?");
            vec![
                get(gitlab::USER),
                get(gitlab::PROJECT),
                get(gitlab::FIND),
                create.clone(),
                get(gitlab::FIND),
                create,
            ]
        }
    };
    expected.extend(match backend {
        Backend::Github => github::upkeep_calls(true),
        _ => vec![
            get(gitlab::DASHBOARD),
            get(gitlab::OPEN),
            post("/api/v4/projects/42/issues?"),
        ],
    });
    expected
}

fn a_rate_limit_with_retry_after_is_waited_out(backend: Backend) {
    let f = Fixture::on(backend);
    f.fault(rate_limit(backend));
    let started = Instant::now();
    let run = f.run(&one_pr(), &[]);
    assert_eq!(run.code, 0, "{}", run.said());
    assert!(started.elapsed() >= Duration::from_secs(2));
    assert_eq!(f.pulls().len(), 1);
}

/// A rate limit that asks to wait two seconds, as the forge answers it.
fn rate_limit(backend: Backend) -> Fault {
    match backend {
        // GitHub's secondary rate limit is a 403.
        Backend::Github => Fault {
            headers: vec![("retry-after", "2".into())],
            ..Fault::new(
                "POST",
                "/pulls",
                403,
                json!({"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.", "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}),
            )
        },
        _ => Fault {
            headers: vec![
                ("Retry-After", "2".into()),
                ("RateLimit-Remaining", "0".into()),
            ],
            ..Fault::new("GET", "/merge_requests", 429, json!("Retry later"))
        },
    }
}
