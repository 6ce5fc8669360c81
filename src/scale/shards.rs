//! `quartermaster shards`: a plan cut into pieces CI jobs can run at the same time.
//!
//! Actions that share a lock key, directly or through others, form one connected component of the
//! lock graph and stay in one shard, where `run --only` runs them in plan order. Components are
//! packed into at most `--max` shards, the largest first into the emptiest shard (balanced by
//! action count, deterministic). A plan that makes a single shard runs whole (`only` empty), so a
//! workflow written for shards also works for a plan of one component, or of no action at all.

use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use yaml_rust2::{Yaml, YamlEmitter, yaml::Hash};

/// The most jobs a GitHub Actions matrix may hold.
pub(crate) const GITHUB_MATRIX_LIMIT: usize = 256;

/// Why shards cannot be cut or written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ShardError {
    #[error("--max must be at least 1")]
    ZeroMax,
    #[error("--max {0} is more than a GitHub matrix holds ({GITHUB_MATRIX_LIMIT} jobs)")]
    TooManyForGithub(usize),
    #[error("--token-variable `{0}` is not a CI/CD variable name")]
    TokenVariable(String),
    #[error("--plan-job is empty")]
    NoPlanJob,
    #[error(
        "the child pipeline's jobs read the plan from a file, and this one came from standard input"
    )]
    PlanFromStdin,
}

impl crate::hint::Hint for ShardError {
    fn hint(&self) -> Option<std::borrow::Cow<'_, str>> {
        Some(match self {
            ShardError::ZeroMax => "give the most CI jobs the plan may take, e.g. --max 4".into(),
            ShardError::TooManyForGithub(_) => {
                format!("use --max {GITHUB_MATRIX_LIMIT} or less").into()
            }
            ShardError::TokenVariable(_) => {
                "use letters, digits and `_`, not starting with a digit".into()
            }
            ShardError::NoPlanJob => {
                "name the parent pipeline's job whose artifacts hold the plan".into()
            }
            ShardError::PlanFromStdin => {
                "pass the plan's path, as the parent pipeline's job leaves it in its artifacts"
                    .into()
            }
        })
    }
}

/// The action indices of each shard, each ascending, shards ordered by their first action.
pub(crate) fn shards<K: Ord>(
    keys: &[BTreeSet<K>],
    max: usize,
) -> Result<Vec<Vec<usize>>, ShardError> {
    if max == 0 {
        return Err(ShardError::ZeroMax);
    }
    let mut components = components(keys);
    // Largest first, each into the shard with the fewest actions (the lowest-numbered on a tie).
    components.sort_by_key(|c| (std::cmp::Reverse(c.len()), c[0]));
    let mut bins: Vec<Vec<usize>> = vec![Vec::new(); max.min(components.len())];
    for component in components {
        let emptiest = (0..bins.len())
            .min_by_key(|&b| (bins[b].len(), b))
            .expect("there is a bin for every component up to max");
        bins[emptiest].extend(component);
    }
    for bin in &mut bins {
        bin.sort_unstable();
    }
    bins.sort_unstable_by_key(|b| b[0]);
    Ok(bins)
}

/// The connected components of the lock graph: actions are nodes, a shared key is an edge.
pub(crate) fn components<K: Ord>(keys: &[BTreeSet<K>]) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..keys.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    let mut first_holder: BTreeMap<&K, usize> = BTreeMap::new();
    for (index, own) in keys.iter().enumerate() {
        for key in own {
            let holder = *first_holder.entry(key).or_insert(index);
            let (a, b) = (root(&mut parent, holder), root(&mut parent, index));
            parent[a.max(b)] = a.min(b);
        }
    }
    let mut groups: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for index in 0..keys.len() {
        let r = root(&mut parent, index);
        groups.entry(r).or_default().push(index);
    }
    groups.into_values().collect()
}

/// Each job's `--only` value: the shards' indices, or one empty value (the whole plan) when the
/// plan makes at most one shard.
fn only_values(shards: &[Vec<usize>]) -> Vec<String> {
    if shards.len() <= 1 {
        return vec![String::new()];
    }
    shards
        .iter()
        .map(|s| s.iter().map(usize::to_string).collect::<Vec<_>>().join(","))
        .collect()
}

/// `--format json`: every shard with its indices.
pub(crate) fn to_json(shards: &[Vec<usize>], actions: usize) -> String {
    let shards: Vec<Value> = shards
        .iter()
        .enumerate()
        .map(|(n, only)| json!({"shard": n, "only": only}))
        .collect();
    let mut text = serde_json::to_string_pretty(&json!({"actions": actions, "shards": shards}))
        .expect("JSON values serialise");
    text.push('\n');
    text
}

/// `--format github-matrix`: one line for `$GITHUB_OUTPUT`, read back with `fromJSON` as a job's
/// `strategy.matrix`; each job passes `matrix.only` to the action's `only` input.
pub(crate) fn github_matrix(shards: &[Vec<usize>], max: usize) -> Result<String, ShardError> {
    if max > GITHUB_MATRIX_LIMIT {
        return Err(ShardError::TooManyForGithub(max));
    }
    let include: Vec<Value> = only_values(shards)
        .into_iter()
        .enumerate()
        .map(|(n, only)| json!({"shard": n, "only": only}))
        .collect();
    Ok(json!({ "include": include }).to_string())
}

/// How the generated GitLab child pipeline finds its inputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GitlabOptions {
    /// The plan's path, as the parent pipeline's job left it in its artifacts.
    pub plan: String,
    /// The parent pipeline's job whose artifacts hold the plan.
    pub(crate) plan_job: String,
    /// The masked CI/CD variable holding the project access token.
    pub(crate) token_variable: String,
}

const GITLAB_HEADER: &str = "\
# Generated by `quartermaster shards --format gitlab-pipeline`: a child pipeline with one job per
# shard of the plan and a job merging their reports. Its trigger job passes PARENT_PIPELINE_ID
# (the pipeline holding the plan artifact); QM_IMAGE names the Quartermaster image, and other QM_*
# settings apply to every job, as CI/CD variables or variables of the trigger job.
";

/// `--format gitlab-pipeline`: a child pipeline for `trigger: include: - artifact:`. Jobs use the
/// image directly rather than the component, whose rules admit only scheduled and web pipelines
/// (a child pipeline's source is `parent_pipeline`) and whose `resource_group` would serialise the
/// shards. Nothing from the plan reaches the YAML but action indices.
pub(crate) fn gitlab_pipeline(
    shards: &[Vec<usize>],
    options: &GitlabOptions,
) -> Result<String, ShardError> {
    let token = &options.token_variable;
    let valid_name = token.chars().next().is_some_and(|c| !c.is_ascii_digit())
        && token.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid_name {
        return Err(ShardError::TokenVariable(token.clone()));
    }
    if options.plan_job.is_empty() {
        return Err(ShardError::NoPlanJob);
    }
    if options.plan == "-" {
        return Err(ShardError::PlanFromStdin);
    }
    let image = json!({"name": "$QM_IMAGE", "entrypoint": [""]});
    let mut pipeline = serde_json::Map::new();
    pipeline.insert("stages".into(), json!(["shards", "report"]));
    let mut shard_jobs = Vec::new();
    for (n, only) in only_values(shards).into_iter().enumerate() {
        let name = format!("quartermaster-shard-{n}");
        let report = format!("shard-{n}.json");
        let summary = format!("shard-{n}.md");
        let job = json!({
            "stage": "shards",
            "image": image,
            "variables": {
                "QM_FORGE": "gitlab",
                "QM_PLAN": options.plan,
                "QM_ONLY": only,
                "QM_TOKEN": format!("${token}"),
                "QM_REPORT": report,
                "QM_SUMMARY": summary,
            },
            "needs": [{"pipeline": "$PARENT_PIPELINE_ID", "job": options.plan_job}],
            // `exec`: a cancelled job signals Quartermaster itself (as in the component).
            "script": ["exec quartermaster run"],
            "artifacts": {"when": "always", "paths": [report, summary]},
        });
        shard_jobs.push(json!({"job": name, "artifacts": true}));
        pipeline.insert(name, job);
    }
    pipeline.insert(
        "quartermaster-report".into(),
        json!({
            "stage": "report",
            "image": image,
            "needs": shard_jobs,
            // A shard whose actions failed fails its job; its report still counts.
            "when": "always",
            "script": [
                "quartermaster report merge shard-*.json -o quartermaster-report.json --summary quartermaster-summary.md"
            ],
            "artifacts": {
                "when": "always",
                "expose_as": "Quartermaster report",
                "paths": ["quartermaster-report.json", "quartermaster-summary.md"],
            },
        }),
    );
    let mut text = String::from(GITLAB_HEADER);
    YamlEmitter::new(&mut text)
        .dump(&yaml(&Value::Object(pipeline)))
        .expect("writing to a String cannot fail");
    text.push('\n');
    Ok(text)
}

/// JSON values as YAML nodes, for the emitter (it quotes whatever needs quoting).
fn yaml(value: &Value) -> Yaml {
    match value {
        Value::Null => Yaml::Null,
        Value::Bool(b) => Yaml::Boolean(*b),
        Value::Number(n) => n
            .as_i64()
            .map_or_else(|| Yaml::Real(n.to_string()), Yaml::Integer),
        Value::String(s) => Yaml::String(s.clone()),
        Value::Array(items) => Yaml::Array(items.iter().map(yaml).collect()),
        Value::Object(map) => Yaml::Hash(
            map.iter()
                .map(|(k, v)| (Yaml::String(k.clone()), yaml(v)))
                .collect::<Hash>(),
        ),
    }
}

#[cfg(test)]
mod tests;
