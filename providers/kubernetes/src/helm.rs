//! `helm_release`: installs and upgrades run the `helm` binary (as many
//! tools do, so charts behave exactly as they do for `helm` users); reads
//! need no binary: they decode Helm's own release records, the
//! `sh.helm.release.v1.NAME.vN` Secrets, straight from the API. Drift is a
//! difference of chart version or of the values the release was given.

use crate::conn::{Conn, Source};
use crate::objects::{keep_typed, list};
use async_trait::async_trait;
use serde_json::{json, Value as Json};
use std::io::Read;
use std::path::PathBuf;
use strata_provider::values::{self};
use strata_provider::{
    AttributeSchema as A, DriverError, Kind, PlanRequest, Planned, ResourceSchema, Tags,
};
use strata_value::json::{infer, plain_json};
use strata_value::types::Type;
use strata_value::value::Value;

const RELEASE: &str = "helm_release";

/// What the helm driver's kinds are given.
pub struct HelmCtx {
    pub conn: Conn,
    pub source: Result<Source, String>,
}

pub struct Release;

fn metadata_type() -> Type {
    Type::list(Type::object(
        [
            ("name", Type::String),
            ("revision", Type::Number),
            ("namespace", Type::String),
            ("chart", Type::String),
            ("version", Type::String),
            ("app_version", Type::String),
            ("values", Type::String),
        ]
        .into_iter()
        .map(|(k, t)| (k.to_string(), t))
        .collect(),
    ))
}

/// Helm's encoding of a release: JSON, gzipped, base64 (inside the
/// Secret's own base64).
pub fn decode_release(secret: &Json) -> Result<Json, String> {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD;
    let outer = secret["data"]["release"]
        .as_str()
        .ok_or("the Secret has no data.release")?;
    let inner = b64.decode(outer).map_err(|e| e.to_string())?;
    let gz = b64.decode(inner).map_err(|e| e.to_string())?;
    let mut text = String::new();
    if gz.starts_with(&[0x1f, 0x8b]) {
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_string(&mut text)
            .map_err(|e| e.to_string())?;
    } else {
        text = String::from_utf8(gz).map_err(|e| e.to_string())?;
    }
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

/// The helm binary on PATH.
fn helm_binary() -> Result<PathBuf, DriverError> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join("helm"))
        .find(|p| p.is_file())
        .ok_or_else(|| DriverError::Api {
            operation: "running helm".into(),
            detail: "helm_release needs the `helm` binary (Helm 3.8 or later) on PATH, and there is none: install it with your package manager (`brew install helm`, `apt-get install helm`, `choco install kubernetes-helm`) or from https://helm.sh/docs/intro/install/, then run strata again".into(),
            retryable: false,
        })
}

struct Spec {
    name: String,
    namespace: String,
    tf: Json,
}

impl Spec {
    fn of(v: &Value) -> Spec {
        let tf = plain_json(v);
        Spec {
            name: tf["name"].as_str().unwrap_or_default().to_string(),
            namespace: tf["namespace"].as_str().unwrap_or("default").to_string(),
            tf,
        }
    }

    fn describe(&self) -> String {
        format!("helm release {}/{}", self.namespace, self.name)
    }
}

impl Release {
    /// The deployed release's record, `None` when there is none.
    async fn current(&self, c: &HelmCtx, s: &Spec) -> Result<Option<Json>, DriverError> {
        let api = c.conn.api(RELEASE)?;
        let op = format!("reading {}", s.describe());
        let path = format!(
            "/api/v1/namespaces/{}/secrets",
            strata_rest::encode(&s.namespace)
        );
        let records = list(api, &op, &path, &format!("owner=helm,name={}", s.name)).await?;
        let latest = records.iter().max_by_key(|r| {
            r["metadata"]["labels"]["version"]
                .as_str()
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        });
        let Some(latest) = latest else {
            return Ok(None);
        };
        if latest["metadata"]["labels"]["status"] == json!("uninstalled") {
            return Ok(None);
        }
        decode_release(latest)
            .map(Some)
            .map_err(|e| DriverError::Api {
                operation: op,
                detail: format!(
                    "Helm's release record {} cannot be read: {e}",
                    latest["metadata"]["name"]
                ),
                retryable: false,
            })
    }

    fn state(&self, release: &Json, prior: &Json) -> Result<Value, DriverError> {
        let chart = &release["chart"]["metadata"];
        let config = release["config"].clone();
        let config = if config.is_null() { json!({}) } else { config };
        let mut j = prior.clone();
        j["id"] = release["name"].clone();
        j["version"] = chart["version"].clone();
        j["status"] = release["info"]["status"].clone();
        j["metadata"] = json!([{
            "name": release["name"], "revision": release["version"], "namespace": release["namespace"],
            "chart": chart["name"], "version": chart["version"], "app_version": chart["appVersion"],
            "values": config.to_string(),
        }]);
        if let Some(m) = j.as_object_mut() {
            m.remove("values");
        }
        let v = strata_rest::fields::to_value(&self.schema(), RELEASE, &j)?;
        let mut fields = v.entries().cloned().unwrap_or_default();
        // No values given and none recorded is the same thing.
        let given = prior["values"].is_null() && config.as_object().is_some_and(|m| m.is_empty());
        // Documents that merge to what the release has are kept as written.
        let as_written = prior["values"].is_array()
            && merged(&documents(&prior["values"])).is_ok_and(|m| m == config);
        let values = if given {
            Value::Null(Type::Dynamic)
        } else if as_written {
            infer(&prior["values"]).map_err(|e| DriverError::Api {
                operation: format!("reading helm release {}", release["name"]),
                detail: e,
                retryable: false,
            })?
        } else {
            infer(&config).map_err(|e| DriverError::Api {
                operation: format!("reading helm release {}", release["name"]),
                detail: e,
                retryable: false,
            })?
        };
        fields.insert("values".into(), values);
        Ok(Value::Object(fields))
    }

    async fn run(&self, c: &HelmCtx, op: &str, args: Vec<String>) -> Result<(), DriverError> {
        self.run_with(c, op, args, None).await
    }

    /// Runs helm with `args`, and `input` on its standard input.
    async fn run_with(
        &self,
        c: &HelmCtx,
        op: &str,
        args: Vec<String>,
        input: Option<&str>,
    ) -> Result<(), DriverError> {
        let helm = helm_binary()?;
        let source = c.source.clone().map_err(|e| DriverError::InvalidConfig {
            type_name: RELEASE.into(),
            detail: e,
        })?;
        let err = |detail: String| DriverError::Api {
            operation: op.to_string(),
            detail,
            retryable: false,
        };
        // A kubeconfig strata made (host and credentials) is handed over
        // in a file only this user can read, gone when helm is done.
        let mut _file = None;
        let mut cmd = tokio::process::Command::new(&helm);
        cmd.args(&args);
        match &source {
            Source::File { path, context } => {
                cmd.arg("--kubeconfig").arg(path);
                if let Some(ctx) = context {
                    cmd.arg("--kube-context").arg(ctx);
                }
            }
            Source::Inline(doc) => {
                let f = tempfile::Builder::new()
                    .prefix("strata-kubeconfig-")
                    .suffix(".json")
                    .tempfile()
                    .map_err(|e| err(format!("cannot write a kubeconfig for helm: {e}")))?;
                std::fs::write(f.path(), doc.to_string())
                    .map_err(|e| err(format!("cannot write a kubeconfig for helm: {e}")))?;
                cmd.arg("--kubeconfig").arg(f.path());
                _file = Some(f);
            }
        }
        cmd.stdin(match input {
            Some(_) => std::process::Stdio::piped(),
            None => std::process::Stdio::null(),
        });
        cmd.stdout(std::process::Stdio::piped());
        cmd.stderr(std::process::Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| err(format!("cannot run {}: {e}", helm.display())))?;
        if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
            use tokio::io::AsyncWriteExt;
            stdin
                .write_all(text.as_bytes())
                .await
                .map_err(|e| err(format!("cannot write to helm: {e}")))?;
        }
        let out = child
            .wait_with_output()
            .await
            .map_err(|e| err(format!("cannot run {}: {e}", helm.display())))?;
        if out.status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(8).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        Err(err(format!(
            "`helm {}` failed ({}): {}",
            args.first().map(String::as_str).unwrap_or(""),
            out.status,
            tail.join("\n")
        )))
    }

    async fn install(
        &self,
        c: &HelmCtx,
        planned: &Value,
        verb: &str,
    ) -> Result<Value, DriverError> {
        let s = Spec::of(planned);
        let op = format!("{verb} {}", s.describe());
        let tf = &s.tf;
        // One file per document, given to helm in order (later ones win).
        let mut files = Vec::new();
        for doc in documents(&tf["values"]) {
            let file = tempfile::Builder::new()
                .prefix("strata-values-")
                .suffix(".yaml")
                .tempfile()
                .and_then(|f| std::fs::write(f.path(), doc).map(|()| f))
                .map_err(|e| DriverError::Api {
                    operation: op.clone(),
                    detail: format!("cannot write the values file: {e}"),
                    retryable: false,
                })?;
            files.push(file);
        }
        let mut args: Vec<String> = vec![
            "upgrade".into(),
            "--install".into(),
            s.name.clone(),
            chart_ref(tf),
            "--namespace".into(),
            s.namespace.clone(),
            // Exactly these values, not the last release's merged in.
            "--reset-values".into(),
            "--timeout".into(),
            format!("{}s", tf["timeout"].as_i64().unwrap_or(300)),
        ];
        for f in &files {
            args.extend(["--values".into(), f.path().display().to_string()]);
        }
        // Kept until helm is done: the registry login it reads.
        let _login = self.credentials(c, &op, tf, &mut args).await?;
        if let Some(r) = tf["repository"].as_str().filter(|r| !is_oci(r)) {
            args.extend(["--repo".into(), r.into()]);
        }
        if let Some(v) = tf["version"].as_str() {
            args.extend(["--version".into(), v.into()]);
        }
        for (flag, attr, default) in [
            ("--create-namespace", "create_namespace", false),
            ("--atomic", "atomic", false),
            ("--wait", "wait", true),
        ] {
            if tf[attr].as_bool().unwrap_or(default) {
                args.push(flag.into());
            }
        }
        self.run(c, &op, args).await?;
        let release = self.current(c, &s).await?.ok_or_else(|| DriverError::Api {
            operation: op.clone(),
            detail: "helm reported success but the cluster has no record of the release".into(),
            retryable: false,
        })?;
        if release["info"]["status"] != json!("deployed") {
            return Err(DriverError::Api {
                operation: op,
                detail: format!(
                    "the release is {}: {}",
                    release["info"]["status"],
                    release["info"]["description"].as_str().unwrap_or("")
                ),
                retryable: false,
            });
        }
        Ok(keep_typed(self.state(&release, tf)?, planned, "values"))
    }
}

impl Release {
    /// The repository's credentials, as helm takes them: for an OCI
    /// registry a `helm registry login` (the password on its standard
    /// input) into a registry configuration of this run's own, which the
    /// upgrade is given; for an HTTP repository `--username` and
    /// `--password`, the only way helm takes them for one.
    async fn credentials(
        &self,
        c: &HelmCtx,
        op: &str,
        tf: &Json,
        args: &mut Vec<String>,
    ) -> Result<Option<tempfile::NamedTempFile>, DriverError> {
        let (Some(user), Some(password)) = (
            tf["repository_username"].as_str(),
            tf["repository_password"].as_str(),
        ) else {
            return Ok(None);
        };
        let repository = tf["repository"].as_str().unwrap_or_default();
        if !is_oci(repository) {
            args.extend([
                "--username".into(),
                user.into(),
                "--password".into(),
                password.into(),
            ]);
            return Ok(None);
        }
        let config = tempfile::Builder::new()
            .prefix("strata-registry-")
            .suffix(".json")
            .tempfile()
            .map_err(|e| DriverError::Api {
                operation: op.to_string(),
                detail: format!("cannot make a registry configuration for helm: {e}"),
                retryable: false,
            })?;
        let path = config.path().display().to_string();
        let host = repository
            .trim_start_matches("oci://")
            .split('/')
            .next()
            .unwrap_or_default();
        let login = [
            "registry",
            "login",
            host,
            "--username",
            user,
            "--password-stdin",
            "--registry-config",
            &path,
        ];
        let login = login.iter().map(|a| a.to_string()).collect();
        self.run_with(c, op, login, Some(password)).await?;
        args.extend(["--registry-config".into(), path]);
        Ok(Some(config))
    }
}

fn is_oci(repository: &str) -> bool {
    repository.starts_with("oci://")
}

/// The chart as helm is to be given it: in an OCI registry, its full
/// reference (`oci://public.ecr.aws/karpenter` and `karpenter` make
/// `oci://public.ecr.aws/karpenter/karpenter`, as the official provider
/// makes it), since helm's `--repo` takes only HTTP repositories.
fn chart_ref(tf: &Json) -> String {
    let chart = tf["chart"].as_str().unwrap_or_default();
    match tf["repository"].as_str() {
        Some(r) if is_oci(r) => format!("{}/{chart}", r.trim_end_matches('/')),
        _ => chart.to_string(),
    }
}

/// The values files a release is given: `values` as the official provider
/// takes it, a list of YAML documents (`[file("values.yaml")]`,
/// `[yamlencode({…})]`), or as an object (one JSON document, JSON being
/// YAML); none given is one empty document.
fn documents(values: &Json) -> Vec<String> {
    match values {
        Json::Null => vec!["{}".into()],
        Json::Array(docs) => docs
            .iter()
            .map(|d| match d {
                Json::String(text) => text.clone(),
                other => other.to_string(),
            })
            .collect(),
        other => vec![other.to_string()],
    }
}

/// The documents merged as helm merges values files: maps key by key,
/// anything else replaced by the later document.
fn merged(docs: &[String]) -> Result<Json, String> {
    let mut out = json!({});
    for doc in docs {
        let v: Json = serde_yaml::from_str(doc).map_err(|e| e.to_string())?;
        merge_into(&mut out, v);
    }
    Ok(out)
}

fn merge_into(into: &mut Json, from: Json) {
    match (into, from) {
        (Json::Object(a), Json::Object(b)) => {
            for (k, v) in b {
                match a.get_mut(&k) {
                    Some(existing) => merge_into(existing, v),
                    None => {
                        a.insert(k, v);
                    }
                }
            }
        }
        // An empty document changes nothing.
        (_, Json::Null) => {}
        (slot, v) => *slot = v,
    }
}

#[async_trait]
impl Kind<HelmCtx> for Release {
    fn schema(&self) -> ResourceSchema {
        ResourceSchema::of_attributes(vec![
            ("id", A::computed(Type::String, "The release name.")),
            ("name", A::required(Type::String, "The release name.").force_new()),
            ("chart", A::required(Type::String, "The chart: a name in `repository`, repo/name, a path or an OCI URL.")),
            ("repository", A::optional(Type::String, "The chart repository's URL.")),
            ("repository_username", A::optional(Type::String, "The user name the repository or OCI registry takes.")),
            ("repository_password", A::optional(Type::String, "The password the repository or OCI registry takes.").sensitive()),
            ("version", A::optional(Type::String, "The chart version; the latest when not set.").and_computed()),
            ("namespace", A::optional(Type::String, "The namespace (default).").force_new()),
            ("create_namespace", A::optional(Type::Bool, "Create the namespace when it is not there.")),
            ("values", A::optional(Type::Dynamic, "The chart's values: an HCL object, or a list of YAML documents merged in order as the official provider takes them.")),
            ("atomic", A::optional(Type::Bool, "Roll back a failed upgrade (helm --atomic).")),
            ("wait", A::optional(Type::Bool, "Wait for the release's resources to be ready (true).")),
            ("timeout", A::optional(Type::Number, "Seconds helm may take (300).")),
            ("status", A::computed(Type::String, "The release's status (deployed).")),
            ("metadata", A::computed(metadata_type(), "The release as deployed: revision, chart, version, app_version, values (JSON).")),
        ])
    }

    fn plan(&self, schema: &ResourceSchema, req: &PlanRequest<'_>) -> Planned {
        let mut p = strata_provider::plan_by_schema(schema, req.prior, req.config);
        let Some(prior) = req.prior else { return p };
        let changed = [
            "chart",
            "repository",
            "version",
            "values",
            "create_namespace",
        ]
        .iter()
        .any(|a| {
            let now = values::get(req.config, a);
            // An unset version is "whatever is installed".
            (*a != "version" || now.is_some_and(|v| !v.is_null()))
                && !values::same(values::get(prior, a), now)
        });
        if changed {
            if let Value::Object(fields) = &mut p.planned {
                fields.insert("metadata".into(), Value::Unknown(metadata_type()));
                fields.insert("status".into(), Value::Unknown(Type::String));
                if values::get(req.config, "version").is_none_or(Value::is_null) {
                    fields.insert("version".into(), Value::Unknown(Type::String));
                }
            }
        }
        p
    }

    async fn read(&self, c: &HelmCtx, objs: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        let mut out = Vec::new();
        for o in objs {
            let s = Spec::of(o);
            out.push(match self.current(c, &s).await? {
                Some(r) => Some(keep_typed(self.state(&r, &s.tf)?, o, "values")),
                None => None,
            });
        }
        Ok(out)
    }

    async fn create(
        &self,
        c: &HelmCtx,
        planned: &Value,
        _tags: &Tags,
    ) -> Result<Value, DriverError> {
        self.install(c, planned, "installing").await
    }

    async fn update(
        &self,
        c: &HelmCtx,
        _prior: &Value,
        planned: &Value,
    ) -> Result<Value, DriverError> {
        self.install(c, planned, "upgrading").await
    }

    async fn delete(&self, c: &HelmCtx, prior: &Value) -> Result<(), DriverError> {
        let s = Spec::of(prior);
        if self.current(c, &s).await?.is_none() {
            return Ok(());
        }
        let op = format!("uninstalling {}", s.describe());
        let timeout = format!("{}s", s.tf["timeout"].as_i64().unwrap_or(300));
        let args = [
            "uninstall",
            &s.name,
            "--namespace",
            &s.namespace,
            "--wait",
            "--timeout",
            &timeout,
        ];
        self.run(c, &op, args.iter().map(|a| a.to_string()).collect())
            .await
    }

    async fn find_tagged(&self, _c: &HelmCtx, _tags: &Tags) -> Result<Vec<Value>, DriverError> {
        // `helm upgrade --install` completes whatever a crash cut short.
        Ok(Vec::new())
    }

    async fn import(&self, c: &HelmCtx, id: &str) -> Result<Option<Value>, DriverError> {
        let (namespace, name) = id
            .split_once('/')
            .ok_or_else(|| DriverError::InvalidConfig {
                type_name: RELEASE.into(),
                detail: format!("import id {id:?} is not NAMESPACE/NAME"),
            })?;
        let s = Spec {
            name: name.into(),
            namespace: namespace.into(),
            tf: json!({"name": name, "namespace": namespace}),
        };
        let Some(r) = self.current(c, &s).await? else {
            return Ok(None);
        };
        let mut prior = s.tf.clone();
        prior["chart"] = r["chart"]["metadata"]["name"].clone();
        prior["values"] = json!({});
        self.state(&r, &prior).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_documents_merge_as_helm_merges_them() {
        let given = json!([
            "driver:\n  enabled: true\n  version: \"570\"\nmig:\n  strategy: single\n",
            "driver:\n  version: \"575\"\ntolerations: []\n",
            "",
        ]);
        let docs = documents(&given);
        assert_eq!(docs.len(), 3);
        assert_eq!(
            merged(&docs).unwrap(),
            json!({
                "driver": {"enabled": true, "version": "575"},
                "mig": {"strategy": "single"},
                "tolerations": [],
            })
        );
        assert!(merged(&["a: [".into()]).is_err());
        // An object is one document; nothing given, one empty one.
        assert_eq!(documents(&json!({"a": 1})), vec!["{\"a\":1}".to_string()]);
        assert_eq!(documents(&Json::Null), vec!["{}".to_string()]);
    }

    #[test]
    fn an_oci_chart_is_given_by_its_full_reference() {
        let oci = json!({"chart": "karpenter", "repository": "oci://public.ecr.aws/karpenter/"});
        assert_eq!(chart_ref(&oci), "oci://public.ecr.aws/karpenter/karpenter");
        let http =
            json!({"chart": "gpu-operator", "repository": "https://helm.ngc.nvidia.com/nvidia"});
        assert_eq!(chart_ref(&http), "gpu-operator");
    }
}
