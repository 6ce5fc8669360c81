use super::*;
use crate::plan::Plan;
use proptest::prelude::*;
use sha2::{Digest, Sha256};

fn plan(name: &str) -> Plan {
    let path = format!("{}/examples/plans/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn strings(keys: &BTreeSet<LockKey>) -> Vec<String> {
    keys.iter().map(ToString::to_string).collect()
}

fn title_hash(title: &str) -> String {
    Sha256::digest(title.as_bytes())[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn seed_plan_keys() {
    let keys = plan_keys(&plan("seed-deps.json"), &KeyContext::default());
    let keys: Vec<Vec<String>> = keys.iter().map(strings).collect();
    let issue = format!(
        "issue-title:{}",
        title_hash("chore(deps): major update for pgx v5 -> v6")
    );
    assert_eq!(
        keys,
        vec![
            vec![
                "branch:quartermaster/go-patch-updates-2026-03-10",
                "branch:quartermaster/go-patch-updates-2026-03-10--github.com-gorilla-mux",
                "workdir:providers/s3",
            ],
            vec![
                "branch:quartermaster/go-patch-updates-2026-03-03",
                "pr:42",
                "workdir:.",
            ],
            vec![issue.as_str()],
            vec!["pr:42"],
            vec!["issue:15"],
            vec!["pr:42"],
            vec![],
        ]
    );
}

#[test]
fn batch_pushes_only_its_branch_and_workspaces_share_a_key() {
    let mut plan = plan("seed-deps.json");
    let Action::CreateMr(a) = &mut plan.actions[0] else {
        panic!("seed-deps.json starts with create_mr")
    };
    a.fallback_strategy = FallbackStrategy::Batch;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("go.work"), "go 1.22\n").unwrap();
    std::fs::create_dir_all(dir.path().join("providers/s3")).unwrap();
    let ctx = KeyContext::discover(&plan, dir.path(), false);
    assert_eq!(
        strings(&action_keys(&plan.actions[0], &ctx)),
        vec![
            "branch:quartermaster/go-patch-updates-2026-03-10",
            "workdir:."
        ]
    );
}

#[test]
fn issue_title_key_hashes_the_title_as_posted() {
    let issue = |title: &str| {
        Action::CreateIssue(crate::plan::CreateIssue {
            title: title.into(),
            body: "b".into(),
            labels: vec![],
            confidence: 1.0,
        })
    };
    let quiet = KeyContext::default();
    let loud = KeyContext {
        allow_mentions: true,
        ..KeyContext::default()
    };
    let key = |a: &Action, ctx: &KeyContext| strings(&action_keys(a, ctx));
    let pinging = issue("Bump for @alice, see #12");
    assert_eq!(
        key(&pinging, &quiet),
        vec![format!(
            "issue-title:{}",
            title_hash(&crate::sink::line("Bump for @alice, see #12", false))
        )]
    );
    assert_ne!(key(&pinging, &quiet), key(&pinging, &loud));
    assert_eq!(
        key(&pinging, &loud),
        vec![format!(
            "issue-title:{}",
            title_hash("Bump for @alice, see #12")
        )]
    );
    // Titles that post alike share the key: a control character becomes a space.
    assert_eq!(key(&issue("a\u{7}b"), &quiet), key(&issue("a b"), &quiet));
}

fn sets(keys: &[&[u8]]) -> Vec<BTreeSet<u8>> {
    keys.iter().map(|k| k.iter().copied().collect()).collect()
}

#[test]
fn ordered_keys_leave_unrelated_actions_parallel() {
    let out = ordered(&sets(&[b"a", b"b", b"ab", b"c"]));
    assert_eq!(out, sets(&[b"a", b"b", b"ab", b"c"]));
    let out = ordered(&sets(&[b"a", b"ab", b"b", b"c"]));
    assert_eq!(out, sets(&[b"a", b"ab", b"ab", b"c"]));
}

proptest! {
    #[test]
    fn ordered_keys_contain_every_earlier_sharer(
        keys in prop::collection::vec(prop::collection::btree_set(0u8..6, 0..3), 0..20),
    ) {
        let out = ordered(&keys);
        for j in 0..keys.len() {
            prop_assert!(out[j].is_superset(&keys[j]));
            for i in 0..j {
                if !out[i].is_disjoint(&out[j]) {
                    prop_assert!(out[i].is_subset(&out[j]), "{i} {j}: {out:?}");
                }
            }
        }
    }
}
