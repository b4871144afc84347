//! Faults at given rates, for every server here ([`crate::Server::faults`]):
//! throttling, 500/503, connection resets and slow answers, each in the
//! wire format of the API the request was for (EC2's `RequestLimitExceeded`,
//! IAM's and STS's `Throttling`, S3's `SlowDown`, EKS's
//! `TooManyRequestsException`, Google's `RESOURCE_EXHAUSTED`, ARM's
//! `TooManyRequests` with `Retry-After`, a Kubernetes `Status`).
//!
//! Most faults strike before the request reaches the server behind (as a
//! real cloud's throttling rejects a call before acting on it), so a retry
//! is safe. A lost answer is the other kind: the server acts, then the
//! connection drops before the client hears of it, so a retried create may
//! find its object already made, or make it twice.

use crate::{Body, Req};
use bytes::Bytes;
use http_body_util::Full;
use hyper::Response;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Rates (0.0–1.0) per request; the rest pass untouched.
#[derive(Debug, Clone, Default)]
pub struct Faults {
    pub throttle: f64,
    pub server_error: f64,
    pub reset: f64,
    pub slow: f64,
    /// Answers dropped after the server acted.
    pub lost: f64,
    /// The longest a slow answer waits.
    pub slow_by: Duration,
    pub seed: u64,
}

/// What was injected so far.
#[derive(Debug, Default)]
pub struct Counts {
    pub requests: AtomicU64,
    pub throttled: AtomicU64,
    pub server_errors: AtomicU64,
    pub resets: AtomicU64,
    pub slowed: AtomicU64,
    pub lost: AtomicU64,
    /// Requests by call (see [`call_name`]), for counting what a run asks.
    pub calls: Mutex<BTreeMap<String, u64>>,
    /// Each request's call and when it came, for how a run spaces them.
    pub arrivals: Mutex<Vec<(String, std::time::Instant)>>,
    /// The calls being answered now, by name, with how many of each.
    in_flight: Mutex<BTreeMap<String, u32>>,
    /// The most different calls answered at once since the last take.
    peak_kinds: AtomicU64,
}

/// A request being answered; counted out when dropped.
pub(crate) struct InFlight<'c> {
    counts: &'c Counts,
    call: String,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if let Ok(mut now) = self.counts.in_flight.lock() {
            if let Some(n) = now.get_mut(&self.call) {
                *n -= 1;
                if *n == 0 {
                    now.remove(&self.call);
                }
            }
        }
    }
}

/// What a request calls: the query protocol's `Action` (EC2, IAM, STS),
/// with " by tags" when it filters by strata's ownership tags (EC2's
/// `tag:strata:…` filters); else the method and the path with every
/// segment after the first replaced by `*` (`GET /clusters/*/*`).
pub fn call_name(req: &Req) -> String {
    let text = format!("{}&{}", req.query, String::from_utf8_lossy(&req.body));
    if let Some(action) = text.split('&').find_map(|kv| kv.strip_prefix("Action=")) {
        let by_tags = text.contains("tag%3Astrata%3A") || text.contains("tag:strata:");
        return format!("{action}{}", if by_tags { " by tags" } else { "" });
    }
    // Smithy's RPC v2 protocol names the operation in the path:
    // `/service/<Service>/operation/<Operation>`.
    if let Some((_, operation)) = req.path.split_once("/operation/") {
        return operation.to_string();
    }
    let mut segments = req.path.trim_start_matches('/').split('/');
    let first = segments.next().unwrap_or_default();
    let rest: String = segments.map(|_| "/*").collect();
    format!("{} /{first}{rest}", req.method)
}

impl Counts {
    /// The requests so far, by [`call_name`].
    pub fn calls(&self) -> BTreeMap<String, u64> {
        self.calls.lock().map(|c| c.clone()).unwrap_or_default()
    }

    /// When each request of `call` came, in order.
    pub fn arrivals_of(&self, call: &str) -> Vec<std::time::Instant> {
        let arrivals = self.arrivals.lock().map(|a| a.clone()).unwrap_or_default();
        arrivals
            .into_iter()
            .filter(|(c, _)| c == call)
            .map(|(_, at)| at)
            .collect()
    }

    /// Counts `req` in flight until the guard drops.
    pub(crate) fn enter(&self, req: &Req) -> InFlight<'_> {
        let call = call_name(req);
        if let Ok(mut now) = self.in_flight.lock() {
            *now.entry(call.clone()).or_default() += 1;
            self.peak_kinds
                .fetch_max(now.len() as u64, Ordering::Relaxed);
        }
        InFlight { counts: self, call }
    }

    /// The most different calls that were answered at once since the
    /// last take (a refresh reading its types side by side has many), and
    /// a new count begun.
    pub fn take_peak_kinds(&self) -> u64 {
        self.peak_kinds.swap(0, Ordering::Relaxed)
    }

    /// The requests by call since the last take, and a new count begun.
    pub fn take_calls(&self) -> BTreeMap<String, u64> {
        self.calls
            .lock()
            .map(|mut c| std::mem::take(&mut *c))
            .unwrap_or_default()
    }

    pub fn summary(&self) -> String {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        format!(
            "{} requests: {} throttled, {} 5xx, {} resets, {} slowed, {} answers lost",
            g(&self.requests),
            g(&self.throttled),
            g(&self.server_errors),
            g(&self.resets),
            g(&self.slowed),
            g(&self.lost)
        )
    }
}

/// The faults in force on a server and their random source.
#[derive(Default)]
pub(crate) struct State {
    pub faults: Option<Faults>,
    rng: u64,
    /// Requests seen since the faults were set.
    seen: u64,
    /// Faults met in a row by each request ([`request_key`]).
    streaks: BTreeMap<String, u32>,
}

/// The most faults one request meets in a row. A cloud's throttling clears
/// within a client's backoff; without this bound a call alone in flight
/// could meet nine in a row (a run the rates allow once in a few thousand
/// applies, seen with seed 1796453525025955730) and exhaust retries that
/// no real service would.
const MOST_IN_A_ROW: u32 = 4;

impl State {
    pub fn set(&mut self, f: Option<Faults>) {
        self.rng = f.as_ref().map_or(0, |f| f.seed | 1);
        self.faults = f;
        self.seen = 0;
        self.streaks.clear();
    }

    fn next(&mut self) -> f64 {
        // xorshift64*: enough for spreading faults, and repeatable by seed.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        (self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// What to do with one request.
pub(crate) enum Fault {
    Answer(Response<Body>),
    Reset,
    Delay(Duration),
    /// Act, then drop the connection instead of answering.
    Lose,
}

pub(crate) fn decide(state: &Mutex<State>, counts: &Counts, req: &Req) -> Option<Fault> {
    let mut s = state.lock().ok()?;
    let f = s.faults.clone()?;
    // Credential exchanges are left alone: the vendors' auth libraries
    // decide their own retries, and what is under test is strata's.
    if req.path.ends_with("/token") {
        return None;
    }
    counts.requests.fetch_add(1, Ordering::Relaxed);
    if let Ok(mut calls) = counts.calls.lock() {
        *calls.entry(call_name(req)).or_default() += 1;
    }
    if let Ok(mut arrivals) = counts.arrivals.lock() {
        arrivals.push((call_name(req), std::time::Instant::now()));
    }
    let mut roll = s.next();
    let extra = s.next();
    // The first requests get one fault of each kind the rates allow, in
    // turn, so that a short run meets every kind; the rest are random.
    let kinds = [f.throttle, f.server_error, f.reset, f.slow, f.lost];
    if let Some(k) = kinds.get(s.seen as usize) {
        if *k > 0.0 {
            roll = kinds[..s.seen as usize].iter().sum::<f64>() + k / 2.0;
        }
    }
    s.seen += 1;
    let key = request_key(req);
    let streak = s.streaks.remove(&key).unwrap_or(0);
    if streak >= MOST_IN_A_ROW {
        return None;
    }
    let fault = pick(&f, roll, extra, counts, req);
    if matches!(fault, Some(Fault::Answer(_) | Fault::Reset | Fault::Lose)) {
        s.streaks.insert(key, streak + 1);
    }
    fault
}

/// What stays the same across one call's retries: the AWS SDKs' invocation
/// id, else the request itself. (Method and path alone are the same for
/// every call of a query API such as EC2's, so a call could meet a fault
/// on every attempt while others between its retries reset the count:
/// eight in a row at a rate of seven in ten.)
fn request_key(req: &Req) -> String {
    if let Some(id) = req
        .headers
        .get("amz-sdk-invocation-id")
        .and_then(|v| v.to_str().ok())
    {
        return id.to_string();
    }
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    req.body.hash(&mut h);
    format!("{} {}?{} {:x}", req.method, req.path, req.query, h.finish())
}

/// The fault `roll` falls on, counted.
fn pick(f: &Faults, roll: f64, extra: f64, counts: &Counts, req: &Req) -> Option<Fault> {
    let mut edge = f.throttle;
    if roll < edge {
        counts.throttled.fetch_add(1, Ordering::Relaxed);
        return Some(Fault::Answer(answer(req, true)));
    }
    edge += f.server_error;
    if roll < edge {
        counts.server_errors.fetch_add(1, Ordering::Relaxed);
        return Some(Fault::Answer(answer(req, false)));
    }
    edge += f.reset;
    if roll < edge {
        counts.resets.fetch_add(1, Ordering::Relaxed);
        return Some(Fault::Reset);
    }
    edge += f.slow;
    if roll < edge {
        counts.slowed.fetch_add(1, Ordering::Relaxed);
        return Some(Fault::Delay(f.slow_by.mul_f64(extra)));
    }
    edge += f.lost;
    if roll < edge {
        counts.lost.fetch_add(1, Ordering::Relaxed);
        return Some(Fault::Lose);
    }
    None
}

/// Which API a request is for, by what its wire format gives away.
enum Api {
    Ec2,
    /// IAM and STS (query protocol, `ErrorResponse`).
    AwsQuery,
    Eks,
    S3,
    Google,
    Azure,
    Kubernetes,
}

fn api(req: &Req) -> Api {
    let body = String::from_utf8_lossy(&req.body);
    if body.contains("Action=") {
        return if body.contains("Version=2016-11-15") {
            Api::Ec2
        } else {
            Api::AwsQuery
        };
    }
    let p = req.path.as_str();
    if p.starts_with("/clusters") || p.starts_with("/addons") {
        Api::Eks
    } else if p.starts_with("/subscriptions") || p.starts_with("/providers") {
        Api::Azure
    } else if p.starts_with("/api/") || p.starts_with("/apis/") || p == "/api" || p == "/apis" {
        Api::Kubernetes
    } else if p.starts_with("/compute/")
        || p.starts_with("/v1/projects")
        || p.starts_with("/storage/")
        || p.contains("/projects/")
    {
        Api::Google
    } else {
        Api::S3
    }
}

fn respond(status: u16, headers: &[(&str, &str)], body: String) -> Response<Body> {
    let mut r = Response::builder().status(status);
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    r.body(Full::new(Bytes::from(body))).unwrap_or_default()
}

/// A throttling (or, with `throttle` false, a server) error as the API
/// the request was for words it.
fn answer(req: &Req, throttle: bool) -> Response<Body> {
    const XML: (&str, &str) = ("content-type", "text/xml");
    const JSON: (&str, &str) = ("content-type", "application/json");
    let api = api(req);
    // (status, code) for throttling, then for a server error.
    let [(ts, tc), (es, ec)] = match api {
        Api::Ec2 => [(503, "RequestLimitExceeded"), (500, "InternalError")],
        Api::AwsQuery => [(400, "Throttling"), (503, "ServiceUnavailable")],
        Api::Eks => [(429, "TooManyRequestsException"), (500, "ServerException")],
        Api::S3 => [(503, "SlowDown"), (500, "InternalError")],
        Api::Google => [(429, "RESOURCE_EXHAUSTED"), (503, "UNAVAILABLE")],
        Api::Azure | Api::Kubernetes => [(429, "TooManyRequests"), (503, "ServiceUnavailable")],
    };
    let (status, code) = if throttle { (ts, tc) } else { (es, ec) };
    match api {
        Api::Ec2 => respond(status, &[XML], format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Response><Errors><Error><Code>{code}</Code><Message>injected</Message></Error></Errors><RequestID>injected</RequestID></Response>")),
        Api::AwsQuery => respond(status, &[XML], format!("<ErrorResponse><Error><Type>Sender</Type><Code>{code}</Code><Message>Rate exceeded</Message></Error><RequestId>injected</RequestId></ErrorResponse>")),
        Api::S3 => respond(status, &[XML], format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{code}</Code><Message>injected</Message><RequestId>injected</RequestId></Error>")),
        Api::Eks => respond(status, &[JSON, ("x-amzn-ErrorType", code)], "{\"message\":\"injected\"}".into()),
        Api::Google => respond(status, &[JSON], format!("{{\"error\":{{\"code\":{status},\"message\":\"injected\",\"status\":\"{code}\"}}}}")),
        Api::Azure => respond(status, &[JSON, ("retry-after", "0")], format!("{{\"error\":{{\"code\":\"{code}\",\"message\":\"injected\"}}}}")),
        Api::Kubernetes => respond(status, &[JSON, ("retry-after", "0")], format!("{{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"injected\",\"reason\":\"{code}\",\"code\":{status}}}")),
    }
}
