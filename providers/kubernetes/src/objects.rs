//! `kubernetes_namespace`, `kubernetes_labels` and `kubernetes_manifest`:
//! each written with server-side apply as field manager `strata` (or the
//! one configured), and read back as the fields it set, so that a change
//! by anyone else to those fields is drift and anything else on the object
//! (server defaults, status, other managers' fields) is not.

use crate::conn::{made_for, managed_by, mark, Api, Conn, Resource, MANAGER};
use async_trait::async_trait;
use http::Method;
use serde_json::{json, Map, Value as Json};
use std::time::Duration;
use strata_provider::values::{self, block, timeouts_block};
use strata_provider::wait::{self, Poll};
use strata_provider::{
    AttributeSchema as A, BlockNesting, BlockSchema, DriverError, Kind, PlanRequest, Planned,
    ResourceSchema, Tags,
};
use strata_value::json::{infer, plain_json};
use strata_value::types::Type;
use strata_value::value::Value;

const DELETE_TIMEOUT: Duration = Duration::from_secs(300);

fn invalid(type_name: &str, detail: impl Into<String>) -> DriverError {
    DriverError::InvalidConfig {
        type_name: type_name.into(),
        detail: detail.into(),
    }
}

fn to_value(schema: &ResourceSchema, type_name: &str, j: &Json) -> Result<Value, DriverError> {
    strata_rest::fields::to_value(schema, type_name, j)
}

/// `new` with its attribute `attr` (of type `any`) replaced by `prior`'s
/// when the two hold the same JSON: what an API gives back carries no
/// types (a list reads back as a tuple), and only a change of content is a
/// change.
pub fn keep_typed(new: Value, prior: &Value, attr: &str) -> Value {
    let (Some(was), Value::Object(mut fields)) = (values::get(prior, attr), new.clone()) else {
        return new;
    };
    let same = fields
        .get(attr)
        .is_some_and(|now| plain_json(now) == plain_json(was));
    if same {
        fields.insert(attr.to_string(), was.clone());
    }
    Value::Object(fields)
}

/// `live` restricted to the keys `shape` has, at every depth of objects
/// (anything else, lists too, is taken whole): the fields a manifest or a
/// label map sets, as the cluster has them now; a field gone is null.
pub fn project(live: &Json, shape: &Json) -> Json {
    match shape.as_object() {
        Some(m) => Json::Object(
            m.iter()
                .map(|(k, s)| (k.clone(), project(live.get(k).unwrap_or(&Json::Null), s)))
                .collect(),
        ),
        None => live.clone(),
    }
}

/// A label or annotation map as strata set it: the live values of the
/// keys the prior state has (absent ones left out, so a removal shows),
/// null when strata sets none.
fn owned_map(live: &Json, prior: &Json) -> Json {
    match prior.as_object() {
        None => Json::Null,
        Some(keys) => Json::Object(
            keys.keys()
                .filter_map(|k| Some((k.clone(), live.get(k)?.clone())))
                .collect(),
        ),
    }
}

/// Terraform's import id form: `apiVersion=v1,kind=Node,name=x`, with
/// `namespace=` for namespaced objects.
fn object_id(api_version: &str, kind: &str, namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) => format!("apiVersion={api_version},kind={kind},namespace={ns},name={name}"),
        None => format!("apiVersion={api_version},kind={kind},name={name}"),
    }
}

/// The parts of an id in that form.
fn parse_id(id: &str) -> Option<(String, String, Option<String>, String)> {
    let mut parts = std::collections::BTreeMap::new();
    for p in id.split(',') {
        let (k, v) = p.split_once('=')?;
        parts.insert(k.trim(), v.trim().to_string());
    }
    Some((
        parts.remove("apiVersion")?,
        parts.remove("kind")?,
        parts.remove("namespace"),
        parts.remove("name")?,
    ))
}

/// An object's server-set fields and status left out: what an imported
/// manifest starts as.
fn without_server_fields(live: &Json) -> Json {
    let mut o = live.clone();
    if let Some(m) = o.as_object_mut() {
        m.remove("status");
    }
    if let Some(meta) = o["metadata"].as_object_mut() {
        for f in [
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "managedFields",
            "selfLink",
        ] {
            meta.remove(f);
        }
    }
    o
}

fn metadata_block(attributes: Vec<(&str, A)>) -> BlockSchema {
    BlockSchema {
        min_items: 1,
        ..values::list_block_max1(attributes)
    }
}

// ---------------------------------------------------------------- namespace

pub struct Namespace;

const NAMESPACE: &str = "kubernetes_namespace";

fn namespace_path(name: &str) -> String {
    format!("/api/v1/namespaces/{}", strata_rest::encode(name))
}

impl Namespace {
    fn state(&self, live: &Json, prior: &Json) -> Result<Value, DriverError> {
        let meta = &live["metadata"];
        let j = json!({
            "id": meta["name"],
            "metadata": [{
                "name": meta["name"],
                "labels": owned_map(&meta["labels"], &prior["metadata"][0]["labels"]),
                "annotations": owned_map(&meta["annotations"], &prior["metadata"][0]["annotations"]),
                "uid": meta["uid"],
                "resource_version": meta["resourceVersion"],
            }],
            "timeouts": prior["timeouts"],
        });
        to_value(&self.schema(), NAMESPACE, &j)
    }

    /// Applies the namespace; a create (`tags`) marks it as strata's.
    async fn apply(
        &self,
        api: &Api,
        tf: &Json,
        op: &str,
        tags: Option<&Tags>,
    ) -> Result<Json, DriverError> {
        let meta = &tf["metadata"][0];
        let name = meta["name"].as_str().unwrap_or_default();
        let mut metadata = json!({"name": name});
        for f in ["labels", "annotations"] {
            if meta[f].is_object() {
                metadata[f] = meta[f].clone();
            }
        }
        let mut body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": metadata});
        if let Some(tags) = tags {
            mark(&mut body, tags);
        }
        // The namespace is strata's: what it sets there is taken back.
        api.apply(op, &namespace_path(name), &body, MANAGER, true)
            .await
    }
}

#[async_trait]
impl Kind<Conn> for Namespace {
    fn schema(&self) -> ResourceSchema {
        let mut s = ResourceSchema::of_attributes(vec![(
            "id",
            A::computed(Type::String, "The namespace's name."),
        )]);
        s.blocks.insert(
            "metadata".into(),
            metadata_block(vec![
                (
                    "name",
                    A::required(Type::String, "The namespace's name.").force_new(),
                ),
                (
                    "labels",
                    A::optional(
                        Type::map(Type::String),
                        "Labels strata sets; others' labels are left alone.",
                    ),
                ),
                (
                    "annotations",
                    A::optional(Type::map(Type::String), "Annotations strata sets."),
                ),
                ("uid", A::computed(Type::String, "The object's UID.")),
                (
                    "resource_version",
                    A::computed(Type::String, "The object's resourceVersion."),
                ),
            ]),
        );
        s.blocks.insert("timeouts".into(), timeouts_block());
        s
    }

    async fn read(&self, c: &Conn, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        let api = c.api(NAMESPACE)?;
        let mut out = Vec::new();
        for o in objs {
            let tf = plain_json(o);
            let name = tf["metadata"][0]["name"].as_str().unwrap_or_default();
            let op = format!("reading namespace {name}");
            out.push(match api.get(&op, &namespace_path(name)).await? {
                Some(live) => Some(self.state(&live, &tf)?),
                None => None,
            });
        }
        Ok(out)
    }

    async fn create(&self, c: &Conn, planned: &Value, tags: &Tags) -> Result<Value, DriverError> {
        let api = c.api(NAMESPACE)?;
        let tf = plain_json(planned);
        let name = tf["metadata"][0]["name"].as_str().unwrap_or_default();
        let op = format!("creating namespace {name}");
        if let Some(live) = api.get(&op, &namespace_path(name)).await? {
            if !managed_by(&live, MANAGER) && !made_for(&live, tags) {
                return Err(strata_rest::not_ours(
                    &op,
                    &format!("namespace {name}"),
                    name,
                ));
            }
        }
        let live = self.apply(api, &tf, &op, Some(tags)).await?;
        self.state(&live, &tf)
    }

    async fn update(
        &self,
        c: &Conn,
        _prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        let api = c.api(NAMESPACE)?;
        let tf = plain_json(planned);
        let name = tf["metadata"][0]["name"].as_str().unwrap_or_default();
        // Without the create's marks: by now the state records the
        // namespace, and server-side apply drops what strata stops sending.
        let live = self
            .apply(api, &tf, &format!("updating namespace {name}"), None)
            .await?;
        self.state(&live, &tf)
    }

    async fn delete(&self, c: &Conn, prior: &Value) -> Result<(), DriverError> {
        let api = c.api(NAMESPACE)?;
        let tf = plain_json(prior);
        let name = tf["metadata"][0]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let op = format!("deleting namespace {name}");
        let path = namespace_path(&name);
        api.delete(&op, &path).await?;
        // A namespace terminates first: its contents go, then it does.
        let timeout = wait::timeout(prior, "delete", DELETE_TIMEOUT);
        wait::gone(&op, timeout, || async {
            Ok(match api.get(&op, &path).await? {
                None => Poll::Gone,
                Some(live) => Poll::Pending(
                    live["status"]["phase"]
                        .as_str()
                        .unwrap_or("present")
                        .to_string(),
                ),
            })
        })
        .await
    }

    async fn find_tagged(&self, _c: &Conn, _tags: &Tags) -> Result<Vec<Value>, DriverError> {
        // Server-side apply is idempotent and a namespace is known by its
        // name: a create the crash cut short is completed by the next one,
        // which finds the namespace managed by strata and takes it.
        Ok(Vec::new())
    }

    async fn import(&self, c: &Conn, id: &str) -> Result<Option<Value>, DriverError> {
        let api = c.api(NAMESPACE)?;
        let Some(live) = api
            .get(&format!("importing namespace {id}"), &namespace_path(id))
            .await?
        else {
            return Ok(None);
        };
        // Labels the system sets (kubernetes.io/…) are not the user's.
        let mine = |m: &Json| -> Json {
            let kept: Map<String, Json> = m
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, _)| !k.contains("kubernetes.io/"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if kept.is_empty() {
                Json::Null
            } else {
                Json::Object(kept)
            }
        };
        let prior = json!({"metadata": [{"labels": mine(&live["metadata"]["labels"]),
                                          "annotations": mine(&live["metadata"]["annotations"])}]});
        self.state(&live, &prior).map(Some)
    }
}

// ---------------------------------------------------------------- labels

pub struct Labels;

const LABELS: &str = "kubernetes_labels";

struct Target {
    api_version: String,
    kind: String,
    namespace: Option<String>,
    name: String,
}

impl Target {
    fn of_labels(tf: &Json) -> Target {
        let s = |v: &Json| v.as_str().unwrap_or_default().to_string();
        Target {
            api_version: s(&tf["api_version"]),
            kind: s(&tf["kind"]),
            namespace: tf["metadata"][0]["namespace"].as_str().map(str::to_string),
            name: s(&tf["metadata"][0]["name"]),
        }
    }

    fn of_manifest(m: &Json) -> Result<Target, DriverError> {
        let field = |v: &Json, what: &str| {
            v.as_str().filter(|x| !x.is_empty()).map(str::to_string).ok_or_else(|| {
                invalid(MANIFEST, format!("the manifest has no {what}: every object needs apiVersion, kind and metadata.name"))
            })
        };
        Ok(Target {
            api_version: field(&m["apiVersion"], "apiVersion")?,
            kind: field(&m["kind"], "kind")?,
            namespace: m["metadata"]["namespace"].as_str().map(str::to_string),
            name: field(&m["metadata"]["name"], "metadata.name")?,
        })
    }

    fn describe(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} {ns}/{}", self.kind, self.name),
            None => format!("{} {}", self.kind, self.name),
        }
    }

    /// The object's path, and the namespace it is in (the `default` one
    /// when a namespaced kind's manifest names none).
    async fn locate(&self, api: &Api) -> Result<(Resource, String, Option<String>), DriverError> {
        let r = api.resource(&self.api_version, &self.kind).await?;
        let ns = r
            .namespaced
            .then(|| self.namespace.clone().unwrap_or_else(|| "default".into()));
        let path = r.path(ns.as_deref(), &self.name);
        Ok((r, path, ns))
    }

    /// The object an import id names, as the cluster has it (with the
    /// namespace it is in); `None` when it is not there.
    async fn import(
        api: &Api,
        type_name: &str,
        id: &str,
    ) -> Result<Option<(Target, Json, Option<String>)>, DriverError> {
        let (api_version, kind, namespace, name) = parse_id(id).ok_or_else(|| {
            invalid(
                type_name,
                format!("import id {id:?} is not apiVersion=…,kind=…,name=… (with namespace=… for namespaced kinds)"),
            )
        })?;
        let t = Target {
            api_version,
            kind,
            namespace,
            name,
        };
        let (_, path, ns) = t.locate(api).await?;
        let live = api
            .get(&format!("importing {}", t.describe()), &path)
            .await?;
        Ok(live.map(|l| (t, l, ns)))
    }

    /// The apply configuration of a labels resource: the object's identity
    /// and the labels (none: every label this manager set is given up).
    fn labels_body(&self, ns: Option<&str>, labels: Option<&Json>) -> Json {
        let mut metadata = json!({"name": self.name});
        if let Some(ns) = ns {
            metadata["namespace"] = json!(ns);
        }
        if let Some(l) = labels {
            metadata["labels"] = l.clone();
        }
        json!({"apiVersion": self.api_version, "kind": self.kind, "metadata": metadata})
    }

    fn id(&self, ns: Option<&str>) -> String {
        object_id(&self.api_version, &self.kind, ns, &self.name)
    }
}

impl Labels {
    fn state(&self, t: &Target, live: &Json, prior: &Json) -> Result<Value, DriverError> {
        let mut j = prior.clone();
        j["id"] = json!(t.id(t.namespace.as_deref()));
        j["labels"] = owned_map(&live["metadata"]["labels"], &prior["labels"]);
        to_value(&self.schema(), LABELS, &j)
    }

    fn manager(tf: &Json) -> String {
        tf["field_manager"].as_str().unwrap_or(MANAGER).to_string()
    }

    async fn write(&self, api: &Api, tf: &Json, op: &str) -> Result<Value, DriverError> {
        let t = Target::of_labels(tf);
        let (_, path, ns) = t.locate(api).await?;
        if api.get(op, &path).await?.is_none() {
            return Err(DriverError::Api {
                operation: op.to_string(),
                detail: format!(
                    "{} is not there: kubernetes_labels labels an object that exists",
                    t.describe()
                ),
                retryable: false,
            });
        }
        let body = t.labels_body(ns.as_deref(), Some(&tf["labels"]));
        let force = tf["force"].as_bool().unwrap_or(false);
        let live = api
            .apply(op, &path, &body, &Self::manager(tf), force)
            .await?;
        self.state(&t, &live, tf)
    }
}

#[async_trait]
impl Kind<Conn> for Labels {
    fn schema(&self) -> ResourceSchema {
        let mut s = ResourceSchema::of_attributes(vec![
            (
                "id",
                A::computed(Type::String, "apiVersion=…,kind=…,name=…"),
            ),
            (
                "api_version",
                A::required(
                    Type::String,
                    "The labelled object's apiVersion (v1 for nodes).",
                )
                .force_new(),
            ),
            (
                "kind",
                A::required(Type::String, "The labelled object's kind (Node).").force_new(),
            ),
            (
                "labels",
                A::required(
                    Type::map(Type::String),
                    "The labels strata sets; others' stay.",
                ),
            ),
            (
                "field_manager",
                A::optional(Type::String, "The field manager to apply as (strata)."),
            ),
            (
                "force",
                A::optional(Type::Bool, "Take over labels another field manager set."),
            ),
        ]);
        s.blocks.insert(
            "metadata".into(),
            metadata_block(vec![
                (
                    "name",
                    A::required(Type::String, "The object's name.").force_new(),
                ),
                (
                    "namespace",
                    A::optional(
                        Type::String,
                        "The object's namespace, for namespaced kinds.",
                    )
                    .force_new(),
                ),
            ]),
        );
        s
    }

    async fn read(&self, c: &Conn, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        let api = c.api(LABELS)?;
        let mut out = Vec::new();
        for o in objs {
            let tf = plain_json(o);
            let t = Target::of_labels(&tf);
            let op = format!("reading the labels of {}", t.describe());
            let (_, path, _) = t.locate(api).await?;
            out.push(match api.get(&op, &path).await? {
                Some(live) => Some(self.state(&t, &live, &tf)?),
                None => None,
            });
        }
        Ok(out)
    }

    async fn create(&self, c: &Conn, planned: &Value, _tags: &Tags) -> Result<Value, DriverError> {
        let tf = plain_json(planned);
        let op = format!("labelling {}", Target::of_labels(&tf).describe());
        self.write(c.api(LABELS)?, &tf, &op).await
    }

    async fn update(
        &self,
        c: &Conn,
        _prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        let tf = plain_json(planned);
        let op = format!("labelling {}", Target::of_labels(&tf).describe());
        self.write(c.api(LABELS)?, &tf, &op).await
    }

    async fn delete(&self, c: &Conn, prior: &Value) -> Result<(), DriverError> {
        let api = c.api(LABELS)?;
        let tf = plain_json(prior);
        let t = Target::of_labels(&tf);
        let op = format!("removing strata's labels from {}", t.describe());
        let (_, path, ns) = t.locate(api).await?;
        if api.get(&op, &path).await?.is_none() {
            return Ok(());
        }
        // Applying nothing gives up every field this manager owned: the
        // server removes the labels no one else set.
        let body = t.labels_body(ns.as_deref(), None);
        api.apply(&op, &path, &body, &Self::manager(&tf), false)
            .await
            .map(|_| ())
    }

    async fn find_tagged(&self, _c: &Conn, _tags: &Tags) -> Result<Vec<Value>, DriverError> {
        // Applying labels again is harmless: nothing to adopt.
        Ok(Vec::new())
    }

    async fn import(&self, c: &Conn, id: &str) -> Result<Option<Value>, DriverError> {
        let Some((t, live, _)) = Target::import(c.api(LABELS)?, LABELS, id).await? else {
            return Ok(None);
        };
        let owned: Map<String, Json> = live["metadata"]["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["manager"] == json!(MANAGER))
            .filter_map(|e| e["fieldsV1"]["f:metadata"]["f:labels"].as_object().cloned())
            .flatten()
            .filter_map(|(k, _)| Some((k.strip_prefix("f:")?.to_string(), Json::Null)))
            .collect();
        let metadata = json!({"name": t.name, "namespace": t.namespace});
        let prior = json!({"api_version": t.api_version, "kind": t.kind, "metadata": [metadata],
                           "labels": owned, "field_manager": Json::Null, "force": Json::Null});
        self.state(&t, &live, &prior).map(Some)
    }
}

// ---------------------------------------------------------------- manifest

pub struct Manifest;

const MANIFEST: &str = "kubernetes_manifest";

impl Manifest {
    fn state(&self, live: &Json, prior: &Json, ns: Option<&str>) -> Result<Value, DriverError> {
        let manifest = project(live, &prior["manifest"]);
        let mut object = live.clone();
        if let Some(meta) = object["metadata"].as_object_mut() {
            meta.remove("managedFields");
        }
        let t = Target::of_manifest(&manifest)?;
        let to = |j: &Json| {
            infer(j).map_err(|e| DriverError::Api {
                operation: format!("reading {}", t.describe()),
                detail: e,
                retryable: false,
            })
        };
        let schema = self.schema();
        let mut rest = prior.clone();
        rest["id"] = json!(t.id(ns));
        if let Some(m) = rest.as_object_mut() {
            m.remove("manifest");
            m.remove("object");
        }
        let v = to_value(&schema, MANIFEST, &rest)?;
        let mut fields = v.entries().cloned().unwrap_or_default();
        fields.insert("manifest".into(), to(&manifest)?);
        fields.insert("object".into(), secret_data_hidden(to(&object)?));
        Ok(Value::Object(fields))
    }

    /// Waits for what the `wait` block asks: conditions with a status,
    /// fields whose value matches a regular expression (`status.phase =
    /// "Running"`, `status.containerStatuses[0].ready = "true"`), as the
    /// official provider reads them.
    async fn wait(
        &self,
        api: &Api,
        path: &str,
        tf: &Json,
        op: &str,
        timeout: Duration,
    ) -> Result<Json, DriverError> {
        let w = &tf["wait"][0];
        let mut fields: Vec<(String, regex::Regex)> = Vec::new();
        for (k, v) in w["fields"].as_object().into_iter().flatten() {
            let want = v.as_str().unwrap_or_default();
            let re = regex::Regex::new(want).map_err(|e| {
                invalid(
                    MANIFEST,
                    format!("wait.fields[{k:?}] is not a regular expression: {e}"),
                )
            })?;
            fields.push((k.clone(), re));
        }
        let conditions: Vec<(String, String)> = w["condition"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                let s = |v: &Json| v.as_str().unwrap_or_default().to_string();
                (s(&c["type"]), s(&c["status"]))
            })
            .collect();
        let missing = |live: &Json| -> Option<String> {
            if let Some(why) = fields.iter().find_map(|(p, re)| unmatched(live, p, re)) {
                return Some(why);
            }
            for (ty, want) in &conditions {
                let have = live["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|c| c["type"] == json!(ty))
                    .and_then(|c| c["status"].as_str().map(str::to_string));
                if have.as_deref() != Some(want.as_str()) {
                    return Some(format!(
                        "condition {ty} is {}, waiting for {want}",
                        have.as_deref().unwrap_or("not reported")
                    ));
                }
            }
            None
        };
        if fields.is_empty() && conditions.is_empty() {
            return api.get(op, path).await?.ok_or_else(|| DriverError::Api {
                operation: op.to_string(),
                detail: "the object disappeared right after it was applied".into(),
                retryable: false,
            });
        }
        let v = wait::ready(op, timeout, || async {
            Ok(match api.get(op, path).await? {
                None => Poll::Gone,
                Some(live) => match missing(&live) {
                    None => Poll::Ready(to_json_value(&live)),
                    Some(why) => Poll::Pending(why),
                },
            })
        })
        .await?;
        Ok(plain_json(&v))
    }

    async fn write(
        &self,
        c: &Conn,
        written: Written<'_>,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        let api = c.api(MANIFEST)?;
        let tf = plain_json(planned);
        let manifest = &tf["manifest"];
        let t = Target::of_manifest(manifest)?;
        let verb = match written {
            Written::Updated => "updating",
            Written::Created(_) => "creating",
        };
        let op = format!("{verb} {}", t.describe());
        let (_, path, ns) = t.locate(api).await?;
        let manager = tf["field_manager"][0]["name"]
            .as_str()
            .unwrap_or(MANAGER)
            .to_string();
        if let Written::Created(tags) = written {
            if let Some(live) = api.get(&op, &path).await? {
                if !managed_by(&live, &manager) && !made_for(&live, tags) {
                    return Err(strata_rest::not_ours(
                        &op,
                        &t.describe(),
                        &t.id(ns.as_deref()),
                    ));
                }
            }
        }
        let mut body = manifest.clone();
        if let Some(ns) = &ns {
            body["metadata"]["namespace"] = json!(ns);
        }
        let force = tf["field_manager"][0]["force_conflicts"]
            .as_bool()
            .unwrap_or(false);
        // A create marks the object as strata's (the state's manifest is
        // the configured one, without the marks).
        let mut sent = body.clone();
        if let Written::Created(tags) = written {
            mark(&mut sent, tags);
        }
        api.apply(&op, &path, &sent, &manager, force).await?;
        let which = match written {
            Written::Updated => "update",
            Written::Created(_) => "create",
        };
        let timeout = wait::timeout(planned, which, Duration::from_secs(600));
        let live = self.wait(api, &path, &tf, &op, timeout).await?;
        let mut shape = tf.clone();
        shape["manifest"] = body;
        Ok(keep_typed(
            self.state(&live, &shape, ns.as_deref())?,
            planned,
            "manifest",
        ))
    }
}

/// Which write a manifest's apply is: a create, with the ownership tags
/// it marks the object with, or an update.
#[derive(Clone, Copy)]
enum Written<'a> {
    Created(&'a Tags),
    Updated,
}

/// A Secret's contents as the cluster has them (a service account token
/// the cluster filled in, say) are sensitive wherever strata shows or
/// stores the object, as what the configuration gave is.
fn secret_data_hidden(object: Value) -> Value {
    let Value::Object(mut fields) = object else {
        return object;
    };
    if fields.get("kind").and_then(Value::as_str) != Some("Secret") {
        return Value::Object(fields);
    }
    for key in ["data", "stringData"] {
        if let Some(v) = fields.remove(key) {
            fields.insert(key.into(), Value::Sensitive(Box::new(v)));
        }
    }
    Value::Object(fields)
}

/// Why the field at `path` of `live` does not match `want` yet, if it
/// does not.
fn unmatched(live: &Json, path: &str, want: &regex::Regex) -> Option<String> {
    let have = field_path(path)
        .iter()
        .try_fold(live, |v, k| match k.parse::<usize>() {
            Ok(i) if v.is_array() => v.get(i),
            _ => v.get(k),
        });
    let have = match have {
        Some(Json::String(s)) => Some(s.clone()),
        Some(Json::Null) | None => None,
        Some(other) => Some(other.to_string()),
    };
    match have.as_deref() {
        Some(h) if want.is_match(h) => None,
        _ => Some(format!(
            "{path} is {}, waiting for a value matching {}",
            have.as_deref().unwrap_or("not set"),
            want.as_str()
        )),
    }
}

/// A `wait` field's path as segments: `status.phase`,
/// `status.containerStatuses[0].ready`, `metadata.annotations["a.b/c"]`.
fn field_path(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(quoted) = rest.strip_prefix("[\"") {
            let end = quoted.find("\"]").unwrap_or(quoted.len());
            out.push(quoted[..end].to_string());
            rest = quoted.get(end + 2..).unwrap_or("");
        } else if let Some(index) = rest.strip_prefix('[') {
            let end = index.find(']').unwrap_or(index.len());
            out.push(index[..end].to_string());
            rest = index.get(end + 1..).unwrap_or("");
        } else {
            let rest_of = rest.strip_prefix('.').unwrap_or(rest);
            let end = rest_of.find(['.', '[']).unwrap_or(rest_of.len());
            if end > 0 {
                out.push(rest_of[..end].to_string());
            }
            rest = &rest_of[end..];
        }
    }
    out
}

fn to_json_value(j: &Json) -> Value {
    infer(j).unwrap_or_else(|_| Value::null())
}

#[async_trait]
impl Kind<Conn> for Manifest {
    fn schema(&self) -> ResourceSchema {
        let mut s = ResourceSchema::of_attributes(vec![
            ("id", A::computed(Type::String, "apiVersion=…,kind=…,namespace=…,name=…")),
            ("manifest", A::required(Type::Dynamic, "The object, as an HCL object: applied with server-side apply; the fields it sets are what strata manages and diffs.")),
            ("object", A::computed(Type::Dynamic, "The whole object as the cluster has it (status included).")),
        ]);
        s.blocks.insert(
            "field_manager".into(),
            block(
                BlockNesting::List,
                0,
                vec![
                    (
                        "name",
                        A::optional(Type::String, "The field manager (strata)."),
                    ),
                    (
                        "force_conflicts",
                        A::optional(Type::Bool, "Take over fields another field manager set."),
                    ),
                ],
            ),
        );
        let mut wait = block(
            BlockNesting::List,
            0,
            vec![(
                "fields",
                A::optional(
                    Type::map(Type::String),
                    "Paths (status.phase, status.containerStatuses[0].ready) and regular expressions their values must match.",
                ),
            )],
        );
        wait.schema.blocks.insert(
            "condition".into(),
            block(
                BlockNesting::List,
                0,
                vec![
                    (
                        "type",
                        A::required(Type::String, "The condition's type (Ready)."),
                    ),
                    (
                        "status",
                        A::required(Type::String, "The status to wait for (True)."),
                    ),
                ],
            ),
        );
        s.blocks.insert("wait".into(), wait);
        s.blocks.insert("timeouts".into(), timeouts_block());
        s
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        let mut p = strata_provider::plan_by_schema(schema, req.prior, req.config);
        let Some(prior) = req.prior else { return p };
        let (was, now) = (
            values::get(prior, "manifest"),
            values::get(req.config, "manifest"),
        );
        if values::same(was, now) {
            return p;
        }
        if let Value::Object(fields) = &mut p.planned {
            fields.insert("object".into(), Value::Unknown(Type::Dynamic));
        }
        // A different apiVersion, kind, name or namespace is another
        // object; so is one whose name is not known yet (a name made from
        // what apply gives cannot be the one the object has).
        let part = |v: Option<&Value>, path: &[&str]| {
            path.iter().try_fold(v?, |x, k| values::get(x, k)).cloned()
        };
        let other = [
            &["apiVersion"][..],
            &["kind"],
            &["metadata", "name"],
            &["metadata", "namespace"],
        ]
        .iter()
        .any(|path| match (part(was, path), part(now, path)) {
            (_, Some(n)) if !n.is_wholly_known() => true,
            (Some(w), Some(n)) => !w.raw_equal(&n),
            (w, n) => w.is_some() != n.is_some(),
        });
        if other {
            p.requires_replace.push(vec!["manifest".to_string()]);
        }
        p
    }

    async fn read(&self, c: &Conn, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        let api = c.api(MANIFEST)?;
        let mut out = Vec::new();
        for o in objs {
            let tf = plain_json(o);
            let t = Target::of_manifest(&tf["manifest"])?;
            let (_, path, ns) = t.locate(api).await?;
            out.push(
                // Unchanged content keeps the types the state has (a map
                // written through a typed variable reads back as an object).
                match api.get(&format!("reading {}", t.describe()), &path).await? {
                    Some(live) => {
                        let now = self.state(&live, &tf, ns.as_deref())?;
                        Some(keep_typed(now, o, "manifest"))
                    }
                    None => None,
                },
            );
        }
        Ok(out)
    }

    async fn create(&self, c: &Conn, planned: &Value, tags: &Tags) -> Result<Value, DriverError> {
        self.write(c, Written::Created(tags), planned).await
    }

    async fn update(
        &self,
        c: &Conn,
        _prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        self.write(c, Written::Updated, planned).await
    }

    async fn delete(&self, c: &Conn, prior: &Value) -> Result<(), DriverError> {
        let api = c.api(MANIFEST)?;
        let tf = plain_json(prior);
        let t = Target::of_manifest(&tf["manifest"])?;
        let op = format!("deleting {}", t.describe());
        let (_, path, _) = t.locate(api).await?;
        if !api.delete(&op, &path).await? {
            return Ok(());
        }
        let timeout = wait::timeout(prior, "delete", DELETE_TIMEOUT);
        wait::gone(&op, timeout, || async {
            Ok(match api.get(&op, &path).await? {
                None => Poll::Gone,
                Some(_) => Poll::Pending("being deleted".into()),
            })
        })
        .await
    }

    async fn find_tagged(&self, _c: &Conn, _tags: &Tags) -> Result<Vec<Value>, DriverError> {
        // As for namespaces: the next create's apply finishes the job.
        Ok(Vec::new())
    }

    async fn import(&self, c: &Conn, id: &str) -> Result<Option<Value>, DriverError> {
        let Some((_, live, ns)) = Target::import(c.api(MANIFEST)?, MANIFEST, id).await? else {
            return Ok(None);
        };
        let prior = json!({"manifest": without_server_fields(&live)});
        self.state(&live, &prior, ns.as_deref()).map(Some)
    }
}

// ---------------------------------------------------------------- data

/// `data "kubernetes_resource"`: any object, as the cluster has it now
/// (what a `check` asserts on: a ClusterPolicy's `status.state`).
pub fn resource_data_schema() -> ResourceSchema {
    let mut s = ResourceSchema::of_attributes(vec![
        (
            "api_version",
            A::required(Type::String, "The object's apiVersion."),
        ),
        ("kind", A::required(Type::String, "The object's kind.")),
        (
            "object",
            A::computed(Type::Dynamic, "The object, status included."),
        ),
    ]);
    s.blocks.insert(
        "metadata".into(),
        metadata_block(vec![
            ("name", A::required(Type::String, "The object's name.")),
            (
                "namespace",
                A::optional(Type::String, "Its namespace, for namespaced kinds."),
            ),
        ]),
    );
    s
}

pub async fn read_resource(c: &Conn, config: &Value) -> Result<Value, DriverError> {
    const DATA: &str = "kubernetes_resource";
    let api = c.api(DATA)?;
    let tf = plain_json(config);
    let t = Target::of_labels(&tf);
    let op = format!("reading {}", t.describe());
    let (_, path, _) = t.locate(api).await?;
    let mut live = api.get(&op, &path).await?.ok_or_else(|| DriverError::Api {
        operation: op.clone(),
        detail: format!("{} is not there", t.describe()),
        retryable: false,
    })?;
    if let Some(meta) = live["metadata"].as_object_mut() {
        meta.remove("managedFields");
    }
    let mut fields = config.entries().cloned().unwrap_or_default();
    fields.insert(
        "object".into(),
        infer(&live).map_err(|e| DriverError::Api {
            operation: op,
            detail: e,
            retryable: false,
        })?,
    );
    Ok(Value::Object(fields))
}

/// The objects at `path` that `selector` picks, read in chunks as kubectl
/// reads them (a large cluster's nodes, a release's many records), each
/// chunk's `continue` followed.
pub async fn list(
    api: &Api,
    op: &str,
    path: &str,
    selector: &str,
) -> Result<Vec<Json>, DriverError> {
    let mut items = Vec::new();
    let mut next = String::new();
    loop {
        let mut url = format!(
            "{path}?labelSelector={}&limit={CHUNK}",
            strata_rest::encode(selector)
        );
        if !next.is_empty() {
            url.push_str(&format!("&continue={}", strata_rest::encode(&next)));
        }
        let page = api.call(op, Method::GET, &url, None).await?;
        items.extend(page["items"].as_array().cloned().unwrap_or_default());
        match page["metadata"]["continue"].as_str() {
            Some(token) if !token.is_empty() => next = token.to_string(),
            _ => return Ok(items),
        }
    }
}

/// Items per chunk of a list (kubectl's default).
const CHUNK: usize = 500;

#[cfg(test)]
mod tests {
    use super::field_path;

    #[test]
    fn a_wait_field_path_reads_as_the_official_provider_writes_it() {
        let cases: [(&str, &[&str]); 4] = [
            ("status.phase", &["status", "phase"]),
            (
                "status.containerStatuses[0].ready",
                &["status", "containerStatuses", "0", "ready"],
            ),
            (
                "metadata.annotations[\"test.terraform.io\"]",
                &["metadata", "annotations", "test.terraform.io"],
            ),
            ("data.token", &["data", "token"]),
        ];
        for (path, want) in cases {
            assert_eq!(field_path(path), want, "{path}");
        }
    }
}
