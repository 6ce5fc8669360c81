//! The server's tools. Every refusal is a tool error (`isError: true`) whose text says what to
//! change, so the agent can fix its call; malformed calls are JSON-RPC errors, from rmcp.

use super::McpConfig;
use crate::changes::Ecosystem;
use crate::cli::render_json;
use crate::finding::explain::explain;
use crate::finding::{Code, clip, closest};
use crate::hint::{Hint, with_hint};
use crate::mission::{self, Mission, MissionError};
use crate::named_plan::{PlanName, PlanStore};
use crate::policy::PolicyError;
use crate::supply::Screener;
use crate::supply::check::Ask;
use crate::supply::notes::NotesApis;
use crate::validate::validate;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ErrorData, ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::borrow::Cow;
use std::sync::Arc;

const INSTRUCTIONS: &str = "Quartermaster executes dependency-update plans after checking them against the operator's mission and the repository's policy. Loop: get_schema and describe_mission (which gives the policy in force), check_update for each version you consider (it says whether the policy's gates would pass it), write the plan, validate_plan until `valid` is true (explain_code says what a finding code means and how to fix it), then submit_plan to store it as a named plan with status `ready` for the next `quartermaster run`. Nothing here runs any command.";

/// Why a tool cannot use the server's configuration; given back to the agent as the tool's error.
#[derive(Debug, thiserror::Error)]
enum ToolRefusal {
    #[error("mission: {0}")]
    Mission(#[source] MissionError),
    #[error("the repository's policy cannot be used: {0}")]
    Policy(#[source] PolicyError),
    /// The gates (registries, OSV) could not be made.
    #[error("{0}")]
    Screener(#[source] crate::supply::ClientError),
}

impl Hint for ToolRefusal {
    fn hint(&self) -> Option<Cow<'_, str>> {
        match self {
            ToolRefusal::Policy(e) => e.hint(),
            ToolRefusal::Mission(_) | ToolRefusal::Screener(_) => None,
        }
    }
}

/// A plan, as a JSON object or as the text of one.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub(crate) enum PlanInput {
    /// The plan as a JSON object.
    Object(Map<String, Value>),
    /// The plan's JSON text, validated byte for byte (syntax errors come with line and column).
    Text(String),
}

impl PlanInput {
    /// The exact text that is validated, and stored by `submit_plan`.
    fn text(&self) -> String {
        match self {
            PlanInput::Text(text) => text.clone(),
            PlanInput::Object(map) => {
                let mut text = serde_json::to_string_pretty(map).expect("a JSON object serialises");
                text.push('\n');
                text
            }
        }
    }
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct ValidateArgs {
    /// The plan to check.
    pub plan: PlanInput,
    /// Mission whose allowlist applies; the server's mission when absent.
    pub mission: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct MissionArgs {
    /// Mission to describe; the server's mission when absent.
    pub mission: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct ExplainArgs {
    /// A finding code, such as `command.option_injection`.
    pub code: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct CheckArgs {
    /// The ecosystem, as `repo_context.ecosystems` names it: npm, yarn, pnpm, bun, pip, poetry,
    /// uv, bundle, cargo or go.
    pub ecosystem: String,
    /// The package, as its registry names it.
    pub package: String,
    /// The candidate version.
    pub version: String,
    /// The version the repository has now, to learn which advisories the update would fix.
    pub current: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct SubmitArgs {
    /// The plan name: lower-case letters, digits, `-` and `_`, starting with a letter or digit.
    pub name: String,
    /// The plan to store; it must validate.
    pub plan: PlanInput,
    /// Mission whose allowlist applies; the server's mission when absent.
    pub mission: Option<String>,
    /// Who writes the plan (your agent name); the stored author is kept when absent.
    pub author: Option<String>,
    /// The revision you last read; the write is refused if the plan has changed since. Without
    /// it, the plan is created or replaced unless Quartermaster is running it.
    pub last_known_revision: Option<i64>,
}

/// The MCP server: its configuration and its tools.
#[derive(Debug, Clone)]
pub(crate) struct QmServer {
    config: Arc<McpConfig>,
    /// The server's mission, loaded once: most calls name no other.
    default_mission: Arc<Mission>,
    /// The gates `check_update` applies, made on first use (on the server's runtime).
    screener: Arc<tokio::sync::OnceCell<Arc<Screener>>>,
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl QmServer {
    /// A server for `config`; fails when its mission cannot be loaded.
    pub(crate) fn new(config: McpConfig) -> Result<Self, MissionError> {
        let mission = mission::load(&config.mission, config.missions_dir.as_deref())?;
        Ok(Self {
            config: Arc::new(config),
            default_mission: Arc::new(mission),
            screener: Arc::default(),
            tool_router: Self::tool_router(),
        })
    }

    #[tool(
        description = "The plan's JSON Schema (draft 2020-12). It describes shapes only; validate_plan applies the mission's allowlists and the test-runner policy.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_schema(&self) -> Result<CallToolResult, ErrorData> {
        Ok(text_result(pretty(&crate::plan::json_schema())))
    }

    #[tool(
        description = "Validate a plan exactly as `quartermaster validate --format json` does: {valid, errors: [{pointer, code, message}], warnings}. Pointers are JSON Pointers into the plan.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn validate_plan(
        &self,
        Parameters(args): Parameters<ValidateArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let mission = match self.mission(args.mission.as_deref()) {
            Ok(mission) => mission,
            Err(refusal) => return Ok(error_result(with_hint(&refusal))),
        };
        let validation = validate(args.plan.text().as_bytes(), &mission);
        Ok(text_result(render_json(&validation)))
    }

    #[tool(
        description = "What a mission allows: action types, update command patterns and the files each ecosystem may change, and the test-runner policy.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn describe_mission(
        &self,
        Parameters(args): Parameters<MissionArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        Ok(match self.mission(args.mission.as_deref()) {
            Ok(mission) => {
                let mut described = super::describe(&mission);
                described["policy"] = self.policy_json();
                text_result(pretty(&described))
            }
            Err(refusal) => error_result(with_hint(&refusal)),
        })
    }

    #[tool(
        description = "Check a candidate version against the repository's policy before planning it, with the facts the run's gates use: its publish time and age against the minimum release age, known advisories (OSV) of the candidate and of the current version (which the update would fix), and whether the registry deprecated or yanked it. `would_pass` false lists the refusals the run would make. The run also checks every transitive version the update resolves.",
        annotations(read_only_hint = true, open_world_hint = true)
    )]
    async fn check_update(
        &self,
        Parameters(args): Parameters<CheckArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let Some(ecosystem) = Ecosystem::from_name(args.ecosystem.trim()) else {
            let known: Vec<&str> = Ecosystem::ALL.iter().map(|e| e.as_str()).collect();
            return Ok(error_result(format!(
                "`{}` is not an ecosystem; use one of: {}",
                clip(&args.ecosystem),
                known.join(", ")
            )));
        };
        let screener = match self.screener().await {
            Ok(screener) => screener,
            Err(refusal) => return Ok(error_result(with_hint(&refusal))),
        };
        let ask = Ask {
            ecosystem,
            package: args.package.trim(),
            version: args.version.trim(),
            current: args.current.as_deref().map(str::trim),
        };
        Ok(text_result(pretty(&screener.check(&ask).await)))
    }

    #[tool(
        description = "What a finding code means and how to fix the plan.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn explain_code(
        &self,
        Parameters(args): Parameters<ExplainArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let Some(code) = Code::from_name(args.code.trim()) else {
            return Ok(unknown_code(&args.code));
        };
        Ok(text_result(pretty(&json!(explain(code)))))
    }

    #[tool(
        description = "Validate a plan and, if it is valid, store it as the docker-agent named plan `name` with status `ready`, for the operator's next `quartermaster run --plan docker-agent:<name>`. An invalid plan is refused with its findings. Runs nothing.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn submit_plan(
        &self,
        Parameters(args): Parameters<SubmitArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let name = match PlanName::parse(&args.name) {
            Ok(name) => name,
            Err(e) => return Ok(error_result(with_hint(&e))),
        };
        let mission = match self.mission(args.mission.as_deref()) {
            Ok(mission) => mission,
            Err(refusal) => return Ok(error_result(with_hint(&refusal))),
        };
        let text = args.plan.text();
        let validation = validate(text.as_bytes(), &mission);
        let findings = render_json(&validation);
        if !validation.is_valid() {
            return Ok(error_result(format!(
                "the plan is invalid, so it was not stored; fix every error and submit again:\n{findings}"
            )));
        }
        let store = PlanStore::new(self.config.plans_dir.clone());
        let (author, expected) = (args.author, args.last_known_revision);
        let written = tokio::task::spawn_blocking(move || {
            store.submit(&name, &text, author.as_deref(), expected)
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("submit_plan stopped: {e}"), None))?;
        Ok(match written {
            Ok(plan) => text_result(pretty(&json!({
                "name": plan.name().as_str(),
                "revision": plan.revision(),
                "status": plan.status(),
                "validation": serde_json::from_str::<Value>(&findings).expect("validation JSON parses"),
            }))),
            Err(e) => error_result(with_hint(&e)),
        })
    }

    /// The policy in force as `describe_mission` reports it, or why it cannot be used.
    fn policy_json(&self) -> Value {
        match &self.config.policy {
            Ok(policy) => json!({
                "source": policy.source,
                "in_force": policy,
                "meaning": "Every version a unit's lock files newly resolve, transitive ones included, is checked when the plan runs: it must be older than release_age.minimum (unless release_age.exclude names it, or it fixes a known advisory of the version it replaces), have no known advisory (advisories.block), and not be deprecated or yanked (deprecated.block). check_update checks one candidate the same way.",
            }),
            Err(e) => json!({"error": e.to_string(), "hint": e.hint()}),
        }
    }

    /// The gates, made on first use.
    async fn screener(&self) -> Result<Arc<Screener>, ToolRefusal> {
        let policy = self.config.policy.clone().map_err(ToolRefusal::Policy)?;
        self.screener
            .get_or_try_init(|| async {
                Screener::new(
                    Arc::new(policy),
                    self.config.registries.clone(),
                    &self.config.osv_url,
                    NotesApis::default(),
                    tokio::runtime::Handle::current(),
                )
                .map(Arc::new)
            })
            .await
            .cloned()
            .map_err(ToolRefusal::Screener)
    }

    /// The named mission, or the server's; the refusal's text when it cannot be loaded.
    fn mission(&self, name: Option<&str>) -> Result<Arc<Mission>, ToolRefusal> {
        match name {
            None => Ok(self.default_mission.clone()),
            Some(name) if name == self.config.mission => Ok(self.default_mission.clone()),
            Some(name) => mission::load(name, self.config.missions_dir.as_deref())
                .map(Arc::new)
                .map_err(ToolRefusal::Mission),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for QmServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "quartermaster",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).expect("a JSON value serialises")
}

fn text_result(text: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

fn error_result(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

fn unknown_code(input: &str) -> CallToolResult {
    let known: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    let hint = match closest(input.trim(), &known) {
        Some(near) => format!("did you mean `{near}`? "),
        None => String::new(),
    };
    error_result(format!(
        "`{}` is not a finding code; {hint}codes are: {}",
        clip(input),
        known.join(", ")
    ))
}
