//! GitHub's REST API for one repository, in memory: issues and pull
//! requests (numbered together, as GitHub numbers them), their comments
//! and labels. Paths, methods, fields and status codes as GitHub documents
//! them (`/repos/{owner}/{repo}/issues/...`, API version 2022-11-28);
//! listings are paged two items at a time with a `Link` header, so a
//! client must follow `rel="next"`. Requests need `Authorization: Bearer`
//! with the token given at start and a `User-Agent`.

use crate::{definitions, json, serve, Body, Req, Server};
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
        async move { handle(&repo, &name, &want, &req) }
    })?;
    Ok(GitHub {
        server,
        repository: repository.into(),
        token: token.into(),
        repo,
    })
}

/// One request to the repository `name` whose token is `want`: held to
/// GitHub's REST API description before it is routed, and its answer after.
fn handle(repo: &Mutex<Repo>, name: &str, want: &str, req: &Req) -> Response<Body> {
    if req.bearer() != Some(want) {
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
    let path = req.path.trim_start_matches('/');
    let method = match definitions::request("github", req.method.as_str(), path, &req.body) {
        Ok(m) => m,
        Err(refused) => {
            let message = format!("Invalid request.\n\n{}", refused.said());
            return json(422, json!({"message": message, "documentation_url": DOCS}));
        }
    };
    let answer = match repo.lock() {
        Ok(mut r) => route(&mut r, req, rest),
        Err(_) => json(500, json!({"message": "stand-in state poisoned"})),
    };
    match method {
        Some(m) => definitions::judged("github", m, answer, |message| {
            json(500, json!({ "message": message }))
        }),
        None => answer,
    }
}

/// A request's body: what it may hold is GitHub's description's to say
/// (checked before the route runs).
fn body_of(req: &Req) -> Result<Json, Response<Body>> {
    serde_json::from_slice(&req.body)
        .map_err(|_| json(400, json!({"message": "Problems parsing JSON"})))
}

/// An issue's title, which GitHub takes as a string or a number.
fn title_of(v: &Json) -> Option<String> {
    match &v["title"] {
        Json::String(t) => Some(t.clone()),
        Json::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Where GitHub's errors point.
const DOCS: &str = "https://docs.github.com/rest/issues";

/// GitHub's 422 as its description's `validation-error` has it.
fn validation_failed(errors: Json) -> Response<Body> {
    json(
        422,
        json!({"message": "Validation Failed", "errors": errors, "documentation_url": DOCS}),
    )
}

/// The label names of a body, in each form GitHub takes them: a list of
/// names or of `{name}` objects, alone or under `labels`, or one name.
fn label_names(v: &Json) -> Vec<String> {
    let list = match v {
        Json::Object(o) => o.get("labels").cloned().unwrap_or_default(),
        other => other.clone(),
    };
    let items = match list {
        Json::Array(items) => items,
        one => vec![one],
    };
    items
        .iter()
        .filter_map(|l| l.as_str().or_else(|| l["name"].as_str()))
        .map(str::to_string)
        .collect()
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
            let v = match body_of(req) {
                Ok(v) => v,
                Err(e) => return e,
            };
            let Some(title) = title_of(&v) else {
                return validation_failed(
                    json!([{"resource": "Issue", "field": "title", "code": "missing_field"}]),
                );
            };
            let number = r.issues.keys().max().copied().unwrap_or(0) + 1;
            let issue = Issue {
                number,
                title,
                body: v["body"].as_str().unwrap_or_default().into(),
                state: "open".into(),
                labels: label_names(&v),
                pull_request: false,
            };
            let out = issue_json(&base, &issue);
            r.issues.insert(number, issue);
            json(201, out)
        }
        (&Method::PATCH, ["issues", n]) => {
            let v = match body_of(req) {
                Ok(v) => v,
                Err(e) => return e,
            };
            let Some(issue) = n.parse().ok().and_then(|n: u64| r.issues.get_mut(&n)) else {
                return not_found();
            };
            if let Some(s) = v["state"].as_str() {
                if s != "open" && s != "closed" {
                    return validation_failed(
                        json!([{"resource": "Issue", "field": "state", "code": "invalid"}]),
                    );
                }
                issue.state = s.into();
            }
            if let Some(b) = v["body"].as_str() {
                issue.body = b.into();
            }
            if let Some(t) = title_of(&v) {
                issue.title = t;
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
            let v = match body_of(req) {
                Ok(v) => v,
                Err(e) => return e,
            };
            let Some(n) = n.parse::<u64>().ok().filter(|n| r.issues.contains_key(n)) else {
                return not_found();
            };
            let Some(body) = v["body"].as_str() else {
                return validation_failed(
                    json!([{"resource": "IssueComment", "field": "body", "code": "missing_field"}]),
                );
            };
            if body.chars().count() > 65_536 {
                return validation_failed(
                    json!([{"resource": "IssueComment", "code": "custom", "field": "body", "message": "body is too long (maximum is 65536 characters)"}]),
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
            let v = match body_of(req) {
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
                    return validation_failed(
                        json!([{"resource": "IssueComment", "code": "custom", "field": "body", "message": "body is too long (maximum is 65536 characters)"}]),
                    );
                }
                c.body = b.into();
            }
            json(200, comment_json(&base, c))
        }
        (&Method::POST, ["issues", n, "labels"]) => {
            let v = match body_of(req) {
                Ok(v) => v,
                Err(e) => return e,
            };
            let Some(issue) = n.parse().ok().and_then(|n: u64| r.issues.get_mut(&n)) else {
                return not_found();
            };
            for l in label_names(&v) {
                if !issue.labels.contains(&l) {
                    issue.labels.push(l);
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

#[cfg(test)]
mod tests {
    use super::*;

    const NAME: &str = "acme/infra";
    const TOKEN: &str = "t";

    fn send(repo: &Mutex<Repo>, method: Method, path: &str, body: &Json) -> (u16, Json) {
        let mut req = Req::with_bearer(method, &format!("/repos/{NAME}/{path}"), TOKEN, body);
        req.headers.insert(
            "user-agent",
            hyper::header::HeaderValue::from_static("test"),
        );
        let r = handle(repo, NAME, TOKEN, &req);
        let code = r.status().as_u16();
        let body = serde_json::from_slice(&crate::ready_bytes(r.into_body())).unwrap_or_default();
        (code, body)
    }

    /// Not stricter than GitHub: each operation's body with every field
    /// its description documents set is taken, and its answer fits.
    #[test]
    fn every_field_github_documents_is_accepted() {
        let repo = Mutex::new(Repo::default());
        let github = definitions::api("github").expect("GitHub's description");
        let filled = |op: &str, base: Json| github.filled(&format!("{op}:request"), &base);
        let taken = |method: Method, path: &str, body: Json| {
            let (code, answer) = send(&repo, method, path, &body);
            assert!((200..300).contains(&code), "{path} {body}: {code} {answer}");
            answer
        };
        taken(
            Method::POST,
            "issues",
            filled("issues/create", json!({"title": "drift: prod"})),
        );
        taken(
            Method::PATCH,
            "issues/1",
            filled("issues/update", json!({"state": "closed"})),
        );
        let comment = taken(
            Method::POST,
            "issues/1/comments",
            filled("issues/create-comment", json!({"body": "plan"})),
        );
        taken(
            Method::PATCH,
            &format!("issues/comments/{}", comment["id"]),
            filled("issues/update-comment", json!({"body": "plan 2"})),
        );
        taken(
            Method::POST,
            "issues/1/labels",
            filled("issues/add-labels", json!({"labels": ["strata"]})),
        );
        let labels = repo
            .lock()
            .map(|r| r.issues[&1].labels.clone())
            .unwrap_or_default();
        assert!(labels.contains(&"strata".to_string()), "{labels:?}");
    }

    /// A refused request is GitHub's 422 as its description's
    /// `validation-error` has it, whether the description or the
    /// stand-in's own rule refused it.
    #[test]
    fn refusals_fit_githubs_validation_error() {
        let repo = Mutex::new(Repo::default());
        let github = definitions::api("github").expect("GitHub's description");
        for body in [json!({"title": ["x"]}), json!({"body": "no title"})] {
            let (code, answer) = send(&repo, Method::POST, "issues", &body);
            assert_eq!(code, 422, "{answer}");
            let misfits = github.check(
                "validation-error",
                &answer,
                definitions::Side::Response,
                "$",
            );
            assert!(misfits.is_empty(), "{answer}: {misfits:?}");
        }
    }
}
