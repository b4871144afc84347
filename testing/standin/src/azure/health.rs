//! Resource Health's record of what befell an AKS pool's VMs, read
//! through Azure Resource Graph as Microsoft documents it ("VM
//! availability information in Azure Resource Graph"): each VM of a
//! scale set carries its latest health annotation in the `HealthResources`
//! table (type `microsoft.resourcehealth/resourceannotations`), with
//! `targetResourceId`, `annotationName` (`VirtualMachinePreempted` for a
//! spot eviction), `occurredTime`, `context`, `category` and
//! `impactType`. A preemption is set from the sandbox's control endpoint.
//!
//! `POST /providers/Microsoft.ResourceGraph/resources` (API 2021-03-01)
//! answers a Kusto query of the subset strata writes — a table, then
//! `where` clauses of `column op 'text'` joined by `and`, `op` one of
//! `==`, `=~`, `!=`, `!~` — with rows as an object array, paged by
//! `$top` and `$skipToken`; any other query is `InvalidQuery`.

use super::*;
use time::OffsetDateTime;

const API: &str = "2021-03-01";
const ANNOTATION: &str = "microsoft.resourcehealth/resourceannotations";

/// The rows a page holds when the request names no `$top`.
const DEFAULT_PAGE: usize = 100;

impl World {
    /// Every agent pool named `pool`: its cluster's node resource group
    /// and the scale set AKS names after the pool.
    fn scale_sets_of(&self, pool: &str) -> Vec<(String, String)> {
        self.objects
            .iter()
            .filter(|(id, o)| id.contains("/agentpools/") && o["name"] == pool)
            .filter_map(|(id, _)| {
                let (cluster_id, _) = id.rsplit_once("/agentpools/")?;
                let cluster = self.objects.get(cluster_id)?;
                let group = cluster["properties"]["nodeResourceGroup"].as_str()?;
                let name = cluster["name"].as_str().unwrap_or_default();
                let digits = name
                    .bytes()
                    .fold(7u32, |h, b| h.wrapping_mul(31) ^ u32::from(b));
                let vmss = format!("aks-{pool}-{:08}-vmss", digits % 100_000_000);
                Some((group.to_string(), vmss))
            })
            .collect()
    }

    /// Spot-evicts `nodes` VMs of every pool named `pool` at `at`, each
    /// annotated `VirtualMachinePreempted` (the pool's scale set makes new
    /// VMs, with new instance ids, in their place): how many pools had it.
    pub(super) fn preempt(&mut self, pool: &str, nodes: u64, at: OffsetDateTime) -> usize {
        let sets = self.scale_sets_of(pool);
        let when = at
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default();
        for (group, vmss) in &sets {
            for _ in 0..nodes {
                let instance = self.id();
                let vm = format!("/subscriptions/{SUBSCRIPTION}/resourceGroups/{group}/providers/Microsoft.Compute/virtualMachineScaleSets/{vmss}/virtualMachines/{instance}");
                let row = json!({
                    "id": format!("{vm}/providers/Microsoft.ResourceHealth/resourceAnnotations/current"),
                    "name": "current",
                    "type": ANNOTATION,
                    "tenantId": TENANT,
                    "location": "eastus",
                    "resourceGroup": group.to_ascii_lowercase(),
                    "subscriptionId": SUBSCRIPTION,
                    "properties": {
                        "targetResourceType": "Microsoft.Compute/virtualMachineScaleSets/virtualMachines",
                        "targetResourceId": vm,
                        "annotationName": "VirtualMachinePreempted",
                        "occurredTime": when,
                        "context": "Platform Initiated",
                        "category": "Unplanned",
                        "impactType": "Informational",
                        "reason": "Preempted",
                        "summary": "The virtual machine was preempted to free capacity for other workloads.",
                    },
                });
                // Resource Health holds one annotation per VM, its latest.
                self.annotations.insert(vm.to_ascii_lowercase(), row);
            }
        }
        sets.len()
    }

    /// `POST /providers/Microsoft.ResourceGraph/resources`.
    pub(super) fn graph_query(&self, req: &Req, version: &str) -> Response<Body> {
        if let Some(refused) = unless_version(version, API) {
            return refused;
        }
        let body: Json = serde_json::from_slice(&req.body).unwrap_or_default();
        let Some(text) = body["query"].as_str() else {
            return error(400, "BadRequest", "The query is required.");
        };
        let asked: Vec<&str> = body["subscriptions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .collect();
        if !asked.is_empty() && !asked.contains(&SUBSCRIPTION) {
            return error(
                403,
                "AuthorizationFailed",
                "The client does not have authorization to query the subscriptions asked.",
            );
        }
        let query = match Query::parse(text) {
            Ok(q) => q,
            Err(why) => return invalid_query(&why),
        };
        let rows: Vec<&Json> = match query.table.as_str() {
            "healthresources" => self.annotations.values().collect(),
            "resources" => self.objects.values().collect(),
            other => return invalid_query(&format!("Table '{other}' is not known here")),
        };
        let rows: Vec<Json> = rows
            .into_iter()
            .filter(|r| query.holds(r))
            .cloned()
            .collect();
        page(&rows, &body["options"])
    }
}

/// One page of `rows` as `options` ask (`$top`, `$skipToken`).
fn page(rows: &[Json], options: &Json) -> Response<Body> {
    let size = options["$top"]
        .as_u64()
        .map_or(DEFAULT_PAGE, |t| t.clamp(1, 1000) as usize);
    let from = match options["$skipToken"].as_str() {
        None => 0,
        Some(t) => match t.strip_prefix("skip-").and_then(|n| n.parse().ok()) {
            Some(n) => n,
            None => return error(400, "BadRequest", "The $skipToken is not valid."),
        },
    };
    let shown: Vec<Json> = rows.iter().skip(from).take(size).cloned().collect();
    let mut answer = json!({
        "totalRecords": rows.len(),
        "count": shown.len(),
        "resultTruncated": "false",
        "facets": [],
        "data": shown,
    });
    if from + size < rows.len() {
        answer["$skipToken"] = json!(format!("skip-{}", from + size));
    }
    json(200, answer)
}

fn invalid_query(why: &str) -> Response<Body> {
    json(
        400,
        json!({"error": {
            "code": "BadRequest",
            "message": format!("Please provide below info when asking for support: the query is invalid. {why}"),
            "details": [
                {"code": "InvalidQuery", "message": "Query is invalid. Please refer to the documentation for the Azure Resource Graph service and fix the error before retrying."},
                {"code": "ParserFailure", "message": why},
            ],
        }}),
    )
}

/// A query of the subset answered here.
#[derive(Debug)]
struct Query {
    table: String,
    conditions: Vec<Condition>,
}

#[derive(Debug, PartialEq)]
struct Condition {
    /// `type`, `resourceGroup`, `properties.annotationName`, …
    column: String,
    op: Op,
    text: String,
}

#[derive(Debug, PartialEq, Clone, Copy)]
enum Op {
    Equals,
    EqualsAnyCase,
    Differs,
    DiffersAnyCase,
}

impl Query {
    fn parse(text: &str) -> Result<Query, String> {
        let mut stages = text.split('|').map(str::trim);
        let table = stages.next().unwrap_or_default().to_ascii_lowercase();
        if table.is_empty() || !table.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(format!("'{table}' is not a table"));
        }
        let mut conditions = Vec::new();
        for stage in stages {
            let Some(rest) = stage.strip_prefix("where ") else {
                return Err(format!("unsupported operator: '{stage}'"));
            };
            for clause in rest.split(" and ") {
                conditions.push(Condition::parse(clause.trim())?);
            }
        }
        Ok(Query { table, conditions })
    }

    fn holds(&self, row: &Json) -> bool {
        self.conditions.iter().all(|c| c.holds(row))
    }
}

impl Condition {
    fn parse(clause: &str) -> Result<Condition, String> {
        let ops = [
            ("=~", Op::EqualsAnyCase),
            ("!~", Op::DiffersAnyCase),
            ("==", Op::Equals),
            ("!=", Op::Differs),
        ];
        let (column, op, value) = ops
            .iter()
            .filter_map(|(word, op)| Some((clause.find(word)?, word.len(), *op)))
            .min_by_key(|(at, _, _)| *at)
            .map(|(at, len, op)| (clause[..at].trim(), op, clause[at + len..].trim()))
            .ok_or_else(|| format!("'{clause}' is not a comparison"))?;
        let quoted = value.len() >= 2
            && (value.starts_with('\'') && value.ends_with('\'')
                || value.starts_with('"') && value.ends_with('"'));
        let named = column
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '_');
        if !quoted || column.is_empty() || !named {
            return Err(format!(
                "'{clause}' is not a comparison of a column with a string"
            ));
        }
        Ok(Condition {
            column: column.to_string(),
            op,
            text: value[1..value.len() - 1].to_string(),
        })
    }

    fn holds(&self, row: &Json) -> bool {
        let value = self
            .column
            .split('.')
            .fold(row, |v, k| &v[k])
            .as_str()
            .unwrap_or_default();
        match self.op {
            Op::Equals => value == self.text,
            Op::Differs => value != self.text,
            Op::EqualsAnyCase => value.eq_ignore_ascii_case(&self.text),
            Op::DiffersAnyCase => !value.eq_ignore_ascii_case(&self.text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_subset_reads_and_filters() {
        let q = Query::parse(
            "HealthResources | where type =~ 'Microsoft.ResourceHealth/resourceAnnotations' and resourceGroup =~ 'MC_A' | where properties.annotationName == 'VirtualMachinePreempted'",
        )
        .expect("parses");
        assert_eq!(q.table, "healthresources");
        assert_eq!(q.conditions.len(), 3);
        let row = |rg: &str, name: &str| json!({"type": ANNOTATION, "resourceGroup": rg, "properties": {"annotationName": name}});
        assert!(q.holds(&row("mc_a", "VirtualMachinePreempted")));
        assert!(!q.holds(&row("mc_b", "VirtualMachinePreempted")));
        assert!(!q.holds(&row("mc_a", "VirtualMachineRestarted")));
        for bad in [
            "HealthResources | summarize count()",
            "HealthResources | where type contains 'x'",
            "HealthResources | where type == x",
            "Health Resources",
        ] {
            assert!(Query::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn pages_follow_skip_tokens_to_the_end() {
        let rows: Vec<Json> = (0..5).map(|n| json!({ "n": n })).collect();
        let read = |options: Json| -> Json {
            let bytes = crate::ready_bytes(page(&rows, &options).into_body());
            serde_json::from_slice(&bytes).expect("JSON")
        };
        let first = read(json!({"$top": 2}));
        assert_eq!(
            (first["count"].as_u64(), first["totalRecords"].as_u64()),
            (Some(2), Some(5))
        );
        let token = first["$skipToken"].clone();
        let last = read(json!({"$top": 2, "$skipToken": "skip-4"}));
        assert_eq!(last["data"], json!([{ "n": 4 }]));
        assert!(last.get("$skipToken").is_none());
        assert_eq!(
            read(json!({"$top": 2, "$skipToken": token}))["data"][0]["n"],
            2
        );
    }
}
