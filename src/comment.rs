//! `strata comment --github`: a report strata rendered as markdown (a plan,
//! or drift), read from stdin and put where a team reads it. On a pull
//! request of the current GitHub Actions run it is one comment, found again
//! by a hidden marker and edited in place on every push, and the pull
//! request carries one `strata:` label saying what the plan does. With
//! `--issue TITLE` it is an issue kept open, and up to date, while drift
//! exists and closed when it is gone.
//!
//! The reports say what they are in a hidden line the markdown renderings
//! end with (`<!-- strata:report ... -->`), so nothing here parses prose.

use crate::diag::{Diag, Diags};
use serde_json::{json, Value as Json};

/// The labels a pull request gets; exactly one at a time.
pub const LABELS: [&str; 3] = ["strata:no-changes", "strata:changes", "strata:destroy"];

/// What a rendered report says it is, from its hidden line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub label: String,
    /// Drift reports: whether there is any.
    pub drift: Option<bool>,
}

/// The hidden line for a plan report.
pub fn plan_marker(label: &str) -> String {
    format!("\n<!-- strata:report kind=plan label={label} -->\n")
}

/// The hidden line for a drift report.
pub fn drift_marker(drift: bool) -> String {
    format!("\n<!-- strata:report kind=drift drift={drift} -->\n")
}

fn report_of(body: &str) -> Option<Report> {
    let line = body
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("<!-- strata:report "))?;
    let field = |name: &str| {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(name)?.strip_prefix('='))
            .map(str::to_string)
    };
    Some(Report {
        label: field("label").unwrap_or_else(|| "strata:changes".into()),
        drift: field("drift").map(|d| d == "true"),
    })
}

/// What the run knows of itself, from GitHub Actions' environment.
pub struct Context {
    pub api: String,
    pub token: String,
    pub repository: String,
    /// The pull request of the event, if it is one.
    pub pull_request: Option<u64>,
    /// A link to the run, when the environment names it.
    pub run_url: Option<String>,
}

fn missing(what: &str) -> Diags {
    Diags::from(Diag::new(
        "strata::comment::environment",
        format!("{what} is not set"),
        "strata comment --github runs inside GitHub Actions, which sets GITHUB_REPOSITORY, GITHUB_EVENT_PATH and GITHUB_API_URL; give the job a token as GITHUB_TOKEN (permissions: pull-requests: write, issues: write).",
    ))
}

impl Context {
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<Context, Diags> {
        let need = |k: &str| env(k).filter(|v| !v.is_empty()).ok_or_else(|| missing(k));
        let token = need("GITHUB_TOKEN")?;
        let repository = need("GITHUB_REPOSITORY")?;
        let api = env("GITHUB_API_URL").unwrap_or_else(|| "https://api.github.com".into());
        let event_path = need("GITHUB_EVENT_PATH")?;
        let event: Json = std::fs::read_to_string(&event_path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .ok_or_else(|| {
                Diags::from(Diag::new(
                    "strata::comment::event",
                    format!("Cannot read the event at {event_path}"),
                    "GITHUB_EVENT_PATH must name the JSON file GitHub Actions writes for the run's event.",
                ))
            })?;
        let pull_request = event["pull_request"]["number"].as_u64().or_else(|| {
            event["issue"]["pull_request"]
                .is_object()
                .then(|| event["issue"]["number"].as_u64())
                .flatten()
        });
        let run_url = match (env("GITHUB_SERVER_URL"), env("GITHUB_RUN_ID")) {
            (Some(server), Some(id)) => Some(format!("{server}/{repository}/actions/runs/{id}")),
            _ => None,
        };
        Ok(Context {
            api: api.trim_end_matches('/').to_string(),
            token,
            repository,
            pull_request,
            run_url,
        })
    }
}

struct Api<'c> {
    ctx: &'c Context,
    http: reqwest::Client,
}

fn api_error(what: &str, detail: impl std::fmt::Display) -> Diags {
    Diags::from(Diag::new(
        "strata::comment::github",
        format!("GitHub refused to {what}"),
        detail.to_string(),
    ))
}

impl Api<'_> {
    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.request_url(method, format!("{}{path}", self.ctx.api))
    }

    fn request_url(&self, method: reqwest::Method, url: String) -> reqwest::RequestBuilder {
        self.http
            .request(method, url)
            .bearer_auth(&self.ctx.token)
            .header("accept", "application/vnd.github+json")
            .header("x-github-api-version", "2022-11-28")
            .header("user-agent", concat!("strata/", env!("CARGO_PKG_VERSION")))
    }

    async fn send(
        &self,
        what: &str,
        req: reqwest::RequestBuilder,
    ) -> Result<(Json, Option<String>), Diags> {
        let resp = req.send().await.map_err(|e| api_error(what, e))?;
        let status = resp.status();
        // The next page, from the Link header (rel="next").
        let next = resp
            .headers()
            .get("link")
            .and_then(|v| v.to_str().ok())
            .and_then(|l| {
                l.split(',').find_map(|part| {
                    let (url, rel) = part.split_once(';')?;
                    rel.contains("rel=\"next\"").then(|| {
                        url.trim()
                            .trim_start_matches('<')
                            .trim_end_matches('>')
                            .to_string()
                    })
                })
            });
        let text = resp.text().await.map_err(|e| api_error(what, e))?;
        if !status.is_success() {
            let message = serde_json::from_str::<Json>(&text)
                .ok()
                .and_then(|j| j["message"].as_str().map(str::to_string))
                .unwrap_or(text);
            return Err(api_error(what, format!("{status}: {message}")));
        }
        Ok((serde_json::from_str(&text).unwrap_or(Json::Null), next))
    }

    /// Every item of a listing, following its pages.
    async fn all(&self, what: &str, path: &str) -> Result<Vec<Json>, Diags> {
        let mut out = Vec::new();
        let mut next = Some(format!("{}{path}", self.ctx.api));
        while let Some(url) = next {
            let (page, more) = self
                .send(what, self.request_url(reqwest::Method::GET, url))
                .await?;
            out.extend(page.as_array().cloned().unwrap_or_default());
            next = more;
        }
        Ok(out)
    }
}

/// Posts or updates the pull request's comment and sets its label;
/// returns the comment's URL.
pub async fn pull_request(ctx: &Context, body: &str, name: &str) -> Result<String, Diags> {
    let Some(number) = ctx.pull_request else {
        return Err(Diags::from(Diag::new(
            "strata::comment::not_a_pull_request",
            "This run's event is not a pull request",
            "strata comment --github posts to the pull request of a pull_request event; for a scheduled drift job use --issue TITLE.",
        )));
    };
    let report = report_of(body).ok_or_else(not_a_report)?;
    let api = Api {
        ctx,
        http: reqwest::Client::new(),
    };
    let repo = &ctx.repository;
    let marker = format!("<!-- strata:comment {name} -->");
    let text = with_footer(body, &marker, ctx);
    let comments = api
        .all(
            "list the pull request's comments",
            &format!("/repos/{repo}/issues/{number}/comments?per_page=100"),
        )
        .await?;
    let ours = comments
        .iter()
        .find(|c| c["body"].as_str().is_some_and(|b| b.contains(&marker)));
    let (comment, _) = match ours.and_then(|c| c["id"].as_u64()) {
        Some(id) => {
            api.send(
                "update the comment",
                api.request(
                    reqwest::Method::PATCH,
                    &format!("/repos/{repo}/issues/comments/{id}"),
                )
                .json(&json!({ "body": text })),
            )
            .await?
        }
        None => {
            api.send(
                "comment on the pull request",
                api.request(
                    reqwest::Method::POST,
                    &format!("/repos/{repo}/issues/{number}/comments"),
                )
                .json(&json!({ "body": text })),
            )
            .await?
        }
    };
    // One strata label at a time: the others go (absent ones answer 404).
    for other in LABELS.iter().filter(|l| **l != report.label) {
        let path = format!(
            "/repos/{repo}/issues/{number}/labels/{}",
            percent_encoding::utf8_percent_encode(other, percent_encoding::NON_ALPHANUMERIC)
        );
        let _ = api
            .send(
                "remove a label",
                api.request(reqwest::Method::DELETE, &path),
            )
            .await;
    }
    api.send(
        "label the pull request",
        api.request(
            reqwest::Method::POST,
            &format!("/repos/{repo}/issues/{number}/labels"),
        )
        .json(&json!({ "labels": [report.label] })),
    )
    .await?;
    Ok(comment["html_url"].as_str().unwrap_or_default().to_string())
}

/// Opens or updates the issue titled `title` while the drift report says
/// there is drift, and closes it when there is none. Returns what it did.
pub async fn drift_issue(ctx: &Context, body: &str, title: &str) -> Result<String, Diags> {
    let report = report_of(body).ok_or_else(not_a_report)?;
    let Some(drift) = report.drift else {
        return Err(Diags::from(Diag::new(
            "strata::comment::not_drift",
            "--issue takes a drift report",
            "Pipe `strata drift --format markdown` into `strata comment --github --issue TITLE`.",
        )));
    };
    let api = Api {
        ctx,
        http: reqwest::Client::new(),
    };
    let repo = &ctx.repository;
    let marker = "<!-- strata:comment drift -->";
    let open = api
        .all(
            "list open issues",
            &format!("/repos/{repo}/issues?state=open&per_page=100"),
        )
        .await?;
    let ours = open
        .iter()
        .find(|i| i["title"] == title && i["pull_request"].is_null())
        .and_then(|i| i["number"].as_u64());
    let text = with_footer(body, marker, ctx);
    match (ours, drift) {
        (Some(n), true) => {
            api.send(
                "update the drift issue",
                api.request(reqwest::Method::PATCH, &format!("/repos/{repo}/issues/{n}"))
                    .json(&json!({ "body": text })),
            )
            .await?;
            Ok(format!("updated issue #{n}"))
        }
        (None, true) => {
            let (issue, _) = api
                .send(
                    "open the drift issue",
                    api.request(reqwest::Method::POST, &format!("/repos/{repo}/issues"))
                        .json(&json!({ "title": title, "body": text, "labels": ["strata:drift"] })),
                )
                .await?;
            Ok(format!("opened issue #{}", issue["number"]))
        }
        (Some(n), false) => {
            api.send(
                "close the drift issue",
                api.request(
                    reqwest::Method::POST,
                    &format!("/repos/{repo}/issues/{n}/comments"),
                )
                .json(&json!({ "body": text })),
            )
            .await?;
            api.send(
                "close the drift issue",
                api.request(reqwest::Method::PATCH, &format!("/repos/{repo}/issues/{n}"))
                    .json(&json!({ "state": "closed", "state_reason": "completed" })),
            )
            .await?;
            Ok(format!("closed issue #{n}"))
        }
        (None, false) => Ok("no drift and no open drift issue".into()),
    }
}

fn not_a_report() -> Diags {
    Diags::from(Diag::new(
        "strata::comment::input",
        "The input is not a strata report",
        "Pipe `strata plan --format markdown` or `strata drift --format markdown` into `strata comment --github`.",
    ))
}

/// The report, a link to the run, and the marker that finds it again.
fn with_footer(body: &str, marker: &str, ctx: &Context) -> String {
    let mut text = body.trim_end().to_string();
    if let Some(url) = &ctx.run_url {
        text.push_str(&format!("\n\n[strata, in this run]({url})"));
    }
    text.push_str(&format!("\n{marker}\n"));
    text
}

/// `strata comment --github [--issue TITLE] [--name NAME]`, the report on
/// stdin; what was posted, in a line.
pub fn run(issue: Option<&str>, name: &str) -> Result<String, Diags> {
    use std::io::Read as _;
    let mut body = String::new();
    std::io::stdin().read_to_string(&mut body).map_err(|e| {
        Diags::from(Diag::new(
            "strata::comment::input",
            "Cannot read the report from stdin",
            e.to_string(),
        ))
    })?;
    let ctx = Context::from_env(&|k| std::env::var(k).ok())?;
    let rt = crate::runtime::start(1)?;
    let done = match issue {
        Some(title) => rt.block_on(drift_issue(&ctx, &body, title))?,
        None => rt.block_on(pull_request(&ctx, &body, name))?,
    };
    Ok(format!("{done}\n"))
}
