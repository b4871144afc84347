//! GitHub's REST API for one repository, in memory: issues and pull
//! requests (numbered together, as GitHub numbers them), their comments
//! and labels. Paths, methods, fields and status codes as GitHub documents
//! them (`/repos/{owner}/{repo}/issues/...`, API version 2022-11-28);
//! listings are paged two items at a time with a `Link` header, so a
//! client must follow `rel="next"`. Requests need `Authorization: Bearer`
//! with the token given at start and a `User-Agent`.

use crate::{check, definitions, json, serve, Body, Req, Server};
use hyper::{Method, Response};
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

const PAGE: usize = 2;

#[derive(Debug, Clone)]
pub struct Issue {
    pub number: u64,
    pub title: String,
    pub body: String,
    pub state: String,
    pub labels: Vec<String>,
    pub pull_request: bool,
}

#[derive(Debug, Clone)]
pub struct Comment {
    pub id: u64,
    pub issue: u64,
    pub body: String,
}

#[derive(Default)]
struct Repo {
    issues: BTreeMap<u64, Issue>,
    comments: Vec<Comment>,
    next_id: u64,
}

/// A running stand-in for `owner/repo`.
pub struct GitHub {
    pub server: Server,
    pub repository: String,
    pub token: String,
    repo: Arc<Mutex<Repo>>,
}

impl GitHub {
    /// The repository's issues and pull requests, by number.
    pub fn issues(&self) -> Vec<Issue> {
        self.repo
            .lock()
            .map(|r| r.issues.values().cloned().collect())
            .unwrap_or_default()
    }

    /// The comments on issue or pull request `n`, oldest first.
    pub fn comments(&self, n: u64) -> Vec<Comment> {
        self.repo
            .lock()
            .map(|r| {
                r.comments
                    .iter()
                    .filter(|c| c.issue == n)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Adds a comment as another user would.
    pub fn comment_as_someone(&self, n: u64, body: &str) {
        if let Ok(mut r) = self.repo.lock() {
            r.next_id += 1;
            let id = r.next_id;
            r.comments.push(Comment {
                id,
                issue: n,
                body: body.into(),
            });
        }
    }
}

/// Starts `owner/repo` with an open pull request numbered `pr`.
pub fn start(repository: &str, token: &str, pr: u64) -> std::io::Result<GitHub> {
    let mut repo = Repo {
        next_id: 1000,
        ..Repo::default()
    };
    repo.issues.insert(
        pr,
        Issue {
            number: pr,
            title: "Add a GPU pool".into(),
            body: String::new(),
            state: "open".into(),
            labels: Vec::new(),
            pull_request: true,
        },
    );
    let repo = Arc::new(Mutex::new(repo));
    let shared = repo.clone();
    let (name, want) = (repository.to_string(), token.to_string());
    let server = serve(move |req: Req| {
        let repo = shared.clone();
        let (name, want) = (name.clone(), want.clone());
        async move {
            if req.bearer() != Some(want.as_str()) {
                return json(401, json!({"message": "Bad credentials"}));
            }
            if !req.headers.contains_key("user-agent") {
                return json(
                    403,
                    json!({"message": "Request forbidden by administrative rules. Please make sure your request has a User-Agent header."}),
                );
            }
            let Some(rest) = req.path.strip_prefix(&format!("/repos/{name}/")) else {
                return json(404, json!({"message": "Not Found"}));
            };
            let rest = rest.to_string();
            // Held to GitHub's REST API description: the request before it
            // is served, the stand-in's answer after.
            let path = req.path.trim_start_matches('/');
            let method = match definitions::request("github", req.method.as_str(), path, &req.body)
            {
                Ok(m) => m,
                Err(refused) => {
                    let message = format!("Invalid request.\n\n{}", refused.said());
                    return json(422, json!({ "message": message }));
                }
            };
            let answer = match repo.lock() {
                Ok(mut r) => route(&mut r, &req, &rest),
                Err(_) => json(500, json!({"message": "stand-in state poisoned"})),
            };
            match method {
                Some(m) => definitions::judged("github", m, answer, |message| {
                    json(500, json!({ "message": message }))
                }),
                None => answer,
            }
        }
    })?;
    Ok(GitHub {
        server,
        repository: repository.into(),
        token: token.into(),
        repo,
    })
}

fn unknown(k: &str, at: &str) -> String {
    format!("Invalid request.\n\n\"{k}\" is not a permitted key ({at}).")
}

fn body_of(req: &Req, shape: Json) -> Result<Json, Response<Body>> {
    let v: Json = serde_json::from_slice(&req.body)
        .map_err(|_| json(400, json!({"message": "Problems parsing JSON"})))?;
    check(&v, &shape, "body", unknown).map_err(|m| json(422, json!({ "message": m })))?;
    Ok(v)
}

/// When the stand-in's objects say they were made and changed: GitHub
/// requires the fields; nothing here reads them.
const WHEN: &str = "2026-01-01T00:00:00Z";

/// The account the token stands for, as GitHub's `simple-user` shows it.
fn user_json() -> Json {
    let login = "strata-bot";
    let api = format!("https://api.github.example/users/{login}");
    json!({
        "login": login, "id": 41898282, "node_id": "MDM6Qm90NDE4OTgyODI=", "type": "Bot",
        "site_admin": false, "gravatar_id": "", "url": api,
        "avatar_url": "https://avatars.github.example/u/41898282",
        "html_url": format!("https://github.example/{login}"),
        "events_url": format!("{api}/events{{/privacy}}"), "followers_url": format!("{api}/followers"),
        "following_url": format!("{api}/following{{/other_user}}"), "gists_url": format!("{api}/gists{{/gist_id}}"),
        "organizations_url": format!("{api}/orgs"), "received_events_url": format!("{api}/received_events"),
        "repos_url": format!("{api}/repos"), "starred_url": format!("{api}/starred{{/owner}}{{/repo}}"),
        "subscriptions_url": format!("{api}/subscriptions"),
    })
}

fn issue_json(base: &str, i: &Issue) -> Json {
    let url = format!(
        "https://api.github.example/repos/{base}/issues/{}",
        i.number
    );
    let mut v = json!({
        "id": 1_000_000 + i.number, "node_id": format!("I_{}", i.number),
        "number": i.number,
        "title": i.title,
        "body": i.body,
        "state": i.state,
        "labels": labels_json(base, i),
        "html_url": format!("https://github.example/{base}/issues/{}", i.number),
        "url": url, "repository_url": format!("https://api.github.example/repos/{base}"),
        "labels_url": format!("{url}/labels{{/name}}"), "comments_url": format!("{url}/comments"),
        "events_url": format!("{url}/events"), "user": user_json(), "assignee": null,
        "milestone": null, "locked": false, "comments": 0,
        "closed_at": if i.state == "closed" { json!(WHEN) } else { Json::Null },
        "created_at": WHEN, "updated_at": WHEN,
    });
    if i.pull_request {
        let pull = format!("https://github.example/{base}/pull/{}", i.number);
        v["pull_request"] = json!({
            "url": format!("https://api.github.example/repos/{base}/pulls/{}", i.number),
            "html_url": pull, "diff_url": format!("{pull}.diff"), "patch_url": format!("{pull}.patch"),
        });
    }
    v
}

/// An issue's labels as GitHub's `label` objects.
fn labels_json(base: &str, i: &Issue) -> Json {
    Json::Array(
        i.labels
            .iter()
            .enumerate()
            .map(|(n, l)| {
                json!({
                    "id": 7_000 + n, "node_id": format!("LA_{n}"), "name": l, "description": null,
                    "color": "ededed", "default": false,
                    "url": format!("https://api.github.example/repos/{base}/labels/{}", percent_encoding::utf8_percent_encode(l, percent_encoding::NON_ALPHANUMERIC)),
                })
            })
            .collect(),
    )
}

fn comment_json(base: &str, c: &Comment) -> Json {
    json!({
        "id": c.id,
        "node_id": format!("IC_{}", c.id),
        "body": c.body,
        "url": format!("https://api.github.example/repos/{base}/issues/comments/{}", c.id),
        "issue_url": format!("https://api.github.example/repos/{base}/issues/{}", c.issue),
        "html_url": format!("https://github.example/{base}/issues/{}#issuecomment-{}", c.issue, c.id),
        "user": user_json(), "created_at": WHEN, "updated_at": WHEN,
    })
}

/// One page of `items`, with GitHub's `Link` header when more follow.
fn page(req: &Req, items: Vec<Json>) -> Response<Body> {
    let n: usize = req
        .param("page")
        .and_then(|p| p.parse().ok())
        .unwrap_or(1)
        .max(1);
    let per: usize = req
        .param("per_page")
        .and_then(|p| p.parse().ok())
        .unwrap_or(30)
        .clamp(1, 100)
        .min(PAGE);
    let chunk: Vec<Json> = items
        .iter()
        .skip((n - 1) * per)
        .take(per)
        .cloned()
        .collect();
    let mut resp = json(200, Json::Array(chunk));
    if items.len() > n * per {
        let others: Vec<&str> = req
            .query
            .split('&')
            .filter(|p| !p.starts_with("page=") && !p.is_empty())
            .collect();
        let host = req
            .headers
            .get("host")
            .and_then(|h| h.to_str().ok())
            .unwrap_or("127.0.0.1");
        let link = format!(
            "<http://{host}{}?{}&page={}>; rel=\"next\"",
            req.path,
            others.join("&"),
            n + 1
        );
        if let Ok(v) = link.parse() {
            resp.headers_mut().insert("link", v);
        }
    }
    resp
}

fn route(r: &mut Repo, req: &Req, rest: &str) -> Response<Body> {
    let base = req
        .path
        .trim_start_matches("/repos/")
        .split('/')
        .take(2)
        .collect::<Vec<_>>()
        .join("/");
    let parts: Vec<&str> = rest.split('/').collect();
    let not_found = || json(404, json!({"message": "Not Found"}));
    match (&req.method, parts.as_slice()) {
        (&Method::GET, ["issues"]) => {
            let state = req.param("state").unwrap_or_else(|| "open".into());
            let items = r
                .issues
                .values()
                .filter(|i| state == "all" || i.state == state)
                .map(|i| issue_json(&base, i))
                .collect();
            page(req, items)
        }
        (&Method::POST, ["issues"]) => {
            let v = match body_of(
                req,
                json!({"title": "string", "body": "string", "labels": "strings"}),
            ) {
                Ok(v) => v,
                Err(e) => return e,
            };
            let Some(title) = v["title"].as_str() else {
                return json(
                    422,
                    json!({"message": "Validation Failed", "errors": [{"field": "title", "code": "missing_field"}]}),
                );
            };
            let number = r.issues.keys().max().copied().unwrap_or(0) + 1;
            let issue = Issue {
                number,
                title: title.into(),
                body: v["body"].as_str().unwrap_or_default().into(),
                state: "open".into(),
                labels: v["labels"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|l| l.as_str().map(str::to_string))
                    .collect(),
                pull_request: false,
            };
            let out = issue_json(&base, &issue);
            r.issues.insert(number, issue);
            json(201, out)
        }
        (&Method::PATCH, ["issues", n]) => {
            let v = match body_of(
                req,
                json!({"title": "string", "body": "string", "state": "string", "state_reason": "string"}),
            ) {
                Ok(v) => v,
                Err(e) => return e,
            };
            let Some(issue) = n.parse().ok().and_then(|n: u64| r.issues.get_mut(&n)) else {
                return not_found();
            };
            if let Some(s) = v["state"].as_str() {
                if s != "open" && s != "closed" {
                    return json(
                        422,
                        json!({"message": "Validation Failed", "errors": [{"field": "state", "code": "invalid"}]}),
                    );
                }
                issue.state = s.into();
            }
            if let Some(b) = v["body"].as_str() {
                issue.body = b.into();
            }
            if let Some(t) = v["title"].as_str() {
                issue.title = t.into();
            }
            json(200, issue_json(&base, issue))
        }
        (&Method::GET, ["issues", n, "comments"]) => {
            let Some(n) = n.parse::<u64>().ok().filter(|n| r.issues.contains_key(n)) else {
                return not_found();
            };
            let items = r
                .comments
                .iter()
                .filter(|c| c.issue == n)
                .map(|c| comment_json(&base, c))
                .collect();
            page(req, items)
        }
        (&Method::POST, ["issues", n, "comments"]) => {
            let v = match body_of(req, json!({"body": "string"})) {
                Ok(v) => v,
                Err(e) => return e,
            };
            let Some(n) = n.parse::<u64>().ok().filter(|n| r.issues.contains_key(n)) else {
                return not_found();
            };
            let Some(body) = v["body"].as_str() else {
                return json(
                    422,
                    json!({"message": "Validation Failed", "errors": [{"field": "body", "code": "missing_field"}]}),
                );
            };
            if body.chars().count() > 65_536 {
                return json(
                    422,
                    json!({"message": "Validation Failed", "errors": [{"resource": "IssueComment", "code": "custom", "field": "body", "message": "body is too long (maximum is 65536 characters)"}]}),
                );
            }
            r.next_id += 1;
            let c = Comment {
                id: r.next_id,
                issue: n,
                body: body.into(),
            };
            let out = comment_json(&base, &c);
            r.comments.push(c);
            json(201, out)
        }
        (&Method::PATCH, ["issues", "comments", id]) => {
            let v = match body_of(req, json!({"body": "string"})) {
                Ok(v) => v,
                Err(e) => return e,
            };
            let Some(c) = id
                .parse::<u64>()
                .ok()
                .and_then(|id| r.comments.iter_mut().find(|c| c.id == id))
            else {
                return not_found();
            };
            if let Some(b) = v["body"].as_str() {
                if b.chars().count() > 65_536 {
                    return json(422, json!({"message": "Validation Failed"}));
                }
                c.body = b.into();
            }
            json(200, comment_json(&base, c))
        }
        (&Method::POST, ["issues", n, "labels"]) => {
            let v = match body_of(req, json!({"labels": "strings"})) {
                Ok(v) => v,
                Err(e) => return e,
            };
            let Some(issue) = n.parse().ok().and_then(|n: u64| r.issues.get_mut(&n)) else {
                return not_found();
            };
            for l in v["labels"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Json::as_str)
            {
                if !issue.labels.iter().any(|x| x == l) {
                    issue.labels.push(l.into());
                }
            }
            json(200, labels_json(&base, issue))
        }
        (&Method::DELETE, ["issues", n, "labels", name]) => {
            let name = crate::decode(name);
            let Some(issue) = n.parse().ok().and_then(|n: u64| r.issues.get_mut(&n)) else {
                return not_found();
            };
            if !issue.labels.contains(&name) {
                return json(404, json!({"message": "Label does not exist"}));
            }
            issue.labels.retain(|l| *l != name);
            json(200, labels_json(&base, issue))
        }
        _ => not_found(),
    }
}
