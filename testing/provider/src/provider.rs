//! The protocol 6 service: decodes each request's values, hands them to
//! `object`, and encodes what comes back.

use crate::identity;
use crate::object::{self, Problem, Step};
use crate::rules;
use crate::schema::{self, OBJECT};
use crate::store::Store;
use crate::token;
use std::path::PathBuf;
use std::sync::OnceLock;
use strata_plugin::msgpack;
use strata_plugin::proto::tfplugin6::{
    self as v6, attribute_path, diagnostic, provider_server::Provider,
};
use strata_value::types::Type;
use strata_value::value::Value;
use tonic::{Request, Response, Status};

/// What private data this provider keeps beside each object: proof that
/// clients hand it back unchanged.
const PRIVATE: &[u8] = b"{\"written_by\":\"stratatest 0.1.0\"}";

#[derive(Default)]
pub struct TestProvider {
    store: OnceLock<Store>,
    /// `stratatest_rules`, kept apart so the data source, which looks
    /// through the objects, never meets them.
    rules: OnceLock<Store>,
}

/// The managed types, each with its value type.
#[derive(Clone, Copy, PartialEq)]
enum Managed {
    Object,
    Rules,
    LooseRules,
}

impl Managed {
    fn of(type_name: &str) -> Result<Managed, Status> {
        match type_name {
            OBJECT => Ok(Managed::Object),
            schema::RULES => Ok(Managed::Rules),
            schema::LOOSE_RULES => Ok(Managed::LooseRules),
            other => Err(unknown_type(other)),
        }
    }

    fn value_type(self) -> Type {
        match self {
            Managed::Object => schema::object_value_type(),
            Managed::Rules => schema::rules_value_type(),
            Managed::LooseRules => schema::loose_rules_value_type(),
        }
    }
}

type Answer<T> = Result<Response<T>, Status>;

fn diagnostics(problems: Vec<Problem>) -> Vec<v6::Diagnostic> {
    problems
        .into_iter()
        .map(|p| v6::Diagnostic {
            severity: diagnostic::Severity::Error as i32,
            summary: p.summary,
            detail: p.detail,
            attribute: (!p.path.is_empty()).then(|| v6::AttributePath {
                steps: p.path.into_iter().map(step).collect(),
            }),
        })
        .collect()
}

fn step(s: Step) -> attribute_path::Step {
    use attribute_path::step::Selector;
    attribute_path::Step {
        selector: Some(match s {
            Step::Attr(a) => Selector::AttributeName(a.to_string()),
            Step::Key(k) => Selector::ElementKeyString(k),
            Step::Index(i) => Selector::ElementKeyInt(i),
        }),
    }
}

fn error(summary: &str, detail: impl Into<String>) -> Vec<v6::Diagnostic> {
    diagnostics(vec![Problem::whole(summary, detail)])
}

/// A request's value; a value that does not decode is the client's fault.
fn decode(v: Option<&v6::DynamicValue>, ty: &Type) -> Result<Value, Status> {
    let Some(v) = v else {
        return Ok(Value::Null(ty.clone()));
    };
    if !v.msgpack.is_empty() {
        return msgpack::decode(&v.msgpack, ty)
            .map_err(|e| Status::invalid_argument(format!("msgpack: {e}")));
    }
    let json: serde_json::Value = serde_json::from_slice(&v.json)
        .map_err(|e| Status::invalid_argument(format!("json: {e}")))?;
    strata_value::json::value_from_json(&json, ty).map_err(Status::invalid_argument)
}

fn encode(v: &Value, ty: &Type) -> Result<Option<v6::DynamicValue>, Status> {
    let msgpack = msgpack::encode(v, ty).map_err(|e| Status::internal(e.to_string()))?;
    Ok(Some(v6::DynamicValue {
        msgpack,
        json: Vec::new(),
    }))
}

/// An object's identity as the wire carries it; none for null.
fn identity_data(v: &Value) -> Result<Option<v6::ResourceIdentityData>, Status> {
    Ok((!v.is_null()).then_some(v6::ResourceIdentityData {
        identity_data: encode(v, &identity::identity_type())?,
    }))
}

/// The identity a client sent; null when none.
fn sent_identity(d: Option<&v6::ResourceIdentityData>) -> Result<Value, Status> {
    decode(
        d.and_then(|d| d.identity_data.as_ref()),
        &identity::identity_type(),
    )
}

/// The identity of an object of `kind`: only objects have one.
fn identity_of(kind: Managed, v: &Value) -> Result<Option<v6::ResourceIdentityData>, Status> {
    match kind {
        Managed::Object => identity_data(&identity::of(v)),
        Managed::Rules | Managed::LooseRules => Ok(None),
    }
}

/// The action type's name checked: `stratatest_note` is the only one.
fn action_type(type_name: &str) -> Result<(), Status> {
    match type_name == crate::action::NOTE {
        true => Ok(()),
        false => Err(unknown_type(type_name)),
    }
}

/// The ephemeral type's name checked: `stratatest_token` is the only one.
fn token_type(type_name: &str) -> Result<(), Status> {
    match type_name == schema::TOKEN {
        true => Ok(()),
        false => Err(unknown_type(type_name)),
    }
}

fn timestamp(t: std::time::SystemTime) -> v6::Timestamp {
    let since = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    v6::Timestamp {
        seconds: i64::try_from(since.as_secs()).unwrap_or(i64::MAX),
        nanos: i32::try_from(since.subsec_nanos()).unwrap_or(0),
    }
}

fn unknown_type(type_name: &str) -> Status {
    Status::invalid_argument(format!("stratatest has no type {type_name:?}"))
}

impl TestProvider {
    /// The store; a call before ConfigureProvider is the client's mistake.
    fn store(&self) -> Result<&Store, Status> {
        configured(&self.store)
    }

    fn store_of(&self, kind: Managed) -> Result<&Store, Status> {
        configured(match kind {
            Managed::Object => &self.store,
            Managed::Rules | Managed::LooseRules => &self.rules,
        })
    }
}

fn configured(store: &OnceLock<Store>) -> Result<&Store, Status> {
    store
        .get()
        .ok_or_else(|| Status::failed_precondition("ConfigureProvider was not called first"))
}

impl TestProvider {
    fn open(&self, dir: &std::path::Path) -> Result<(), String> {
        let _ = self.store.set(Store::open(dir)?);
        let _ = self.rules.set(Store::lazy(&dir.join("rules")));
        Ok(())
    }
}

#[tonic::async_trait]
impl Provider for TestProvider {
    async fn get_metadata(
        &self,
        _: Request<v6::get_metadata::Request>,
    ) -> Answer<v6::get_metadata::Response> {
        Ok(Response::new(v6::get_metadata::Response {
            resources: [OBJECT, schema::RULES, schema::LOOSE_RULES]
                .map(|t| v6::get_metadata::ResourceMetadata {
                    type_name: t.into(),
                })
                .to_vec(),
            data_sources: [OBJECT, schema::LOOKUP]
                .map(|t| v6::get_metadata::DataSourceMetadata {
                    type_name: t.into(),
                })
                .to_vec(),
            ..Default::default()
        }))
    }

    async fn get_provider_schema(
        &self,
        _: Request<v6::get_provider_schema::Request>,
    ) -> Answer<v6::get_provider_schema::Response> {
        crate::log("schema");
        let mut resource_schemas: std::collections::HashMap<_, _> = [
            (OBJECT.to_string(), schema::object_schema()),
            (schema::RULES.to_string(), schema::rules_schema()),
            (
                schema::LOOSE_RULES.to_string(),
                schema::loose_rules_schema(),
            ),
        ]
        .into();
        if std::env::var_os("STRATATEST_ODD_SCHEMA").is_some() {
            resource_schemas.insert(schema::ODD.to_string(), schema::odd_schema());
        }
        Ok(Response::new(v6::get_provider_schema::Response {
            provider: Some(schema::provider_schema()),
            resource_schemas,
            data_source_schemas: [OBJECT, schema::LOOKUP]
                .map(|t| (t.to_string(), schema::lookup_schema()))
                .into(),
            ephemeral_resource_schemas: [(schema::TOKEN.to_string(), schema::token_schema())]
                .into(),
            action_schemas: [(crate::action::NOTE.to_string(), crate::action::schema())].into(),
            // A list resource needs its type's identity.
            list_resource_schemas: match identity::declared() {
                true => [(OBJECT.to_string(), crate::list::schema())].into(),
                false => Default::default(),
            },
            functions: crate::functions::declared(),
            server_capabilities: Some(v6::ServerCapabilities {
                plan_destroy: false,
                // As providers built on current SDKs say: a second
                // process of it needs no GetProviderSchema first.
                get_provider_schema_optional: true,
                move_resource_state: true,
            }),
            ..Default::default()
        }))
    }

    async fn validate_provider_config(
        &self,
        request: Request<v6::validate_provider_config::Request>,
    ) -> Answer<v6::validate_provider_config::Response> {
        decode(
            request.get_ref().config.as_ref(),
            &schema::provider_value_type(),
        )?;
        Ok(Response::new(Default::default()))
    }

    async fn validate_resource_config(
        &self,
        request: Request<v6::validate_resource_config::Request>,
    ) -> Answer<v6::validate_resource_config::Response> {
        let r = request.into_inner();
        let kind = Managed::of(&r.type_name)?;
        let config = decode(r.config.as_ref(), &kind.value_type())?;
        let problems = match kind {
            Managed::Object => object::validate(&config),
            Managed::Rules => rules::validate(&config),
            Managed::LooseRules => Vec::new(),
        };
        Ok(Response::new(v6::validate_resource_config::Response {
            diagnostics: diagnostics(problems),
        }))
    }

    async fn validate_data_resource_config(
        &self,
        request: Request<v6::validate_data_resource_config::Request>,
    ) -> Answer<v6::validate_data_resource_config::Response> {
        let r = request.into_inner();
        if r.type_name != OBJECT && r.type_name != schema::LOOKUP {
            return Err(unknown_type(&r.type_name));
        }
        decode(r.config.as_ref(), &schema::lookup_value_type())?;
        Ok(Response::new(Default::default()))
    }

    async fn upgrade_resource_state(
        &self,
        request: Request<v6::upgrade_resource_state::Request>,
    ) -> Answer<v6::upgrade_resource_state::Response> {
        let r = request.into_inner();
        let kind = Managed::of(&r.type_name)?;
        let raw = r.raw_state.map(|s| s.json).unwrap_or_default();
        let upgraded = serde_json::from_slice(&raw)
            .map_err(|e| e.to_string())
            .and_then(|json| match kind {
                Managed::Object => object::upgrade(r.version, &json),
                // The rules have had one layout only.
                Managed::Rules | Managed::LooseRules => {
                    strata_value::json::value_from_json(&json, &kind.value_type())
                }
            });
        Ok(Response::new(match upgraded {
            Ok(v) => v6::upgrade_resource_state::Response {
                upgraded_state: encode(&v, &kind.value_type())?,
                diagnostics: Vec::new(),
            },
            Err(e) => v6::upgrade_resource_state::Response {
                upgraded_state: None,
                diagnostics: error("Cannot upgrade the stored object", e),
            },
        }))
    }

    async fn plan_action(
        &self,
        request: Request<v6::plan_action::Request>,
    ) -> Answer<v6::plan_action::Response> {
        let r = request.into_inner();
        action_type(&r.action_type)?;
        let config = decode(r.config.as_ref(), &crate::action::config_type())?;
        // A message known only at apply (a triggering object's id) is
        // judged then.
        let known = config
            .entries()
            .and_then(|a| a.get("message"))
            .is_some_and(strata_value::value::Value::is_known);
        let diagnostics = match known && crate::action::message(&config).is_empty() {
            true => error("Empty message", "A note needs something to say."),
            false => Vec::new(),
        };
        Ok(Response::new(v6::plan_action::Response {
            diagnostics,
            deferred: None,
        }))
    }

    type InvokeActionStream = std::pin::Pin<
        Box<dyn tokio_stream::Stream<Item = Result<v6::invoke_action::Event, Status>> + Send>,
    >;

    async fn invoke_action(
        &self,
        request: Request<v6::invoke_action::Request>,
    ) -> Answer<Self::InvokeActionStream> {
        use v6::invoke_action::event::{Completed, Progress, Type as Kind};
        let r = request.into_inner();
        action_type(&r.action_type)?;
        let config = decode(r.config.as_ref(), &crate::action::config_type())?;
        let message = crate::action::message(&config);
        let progress = |m: String| v6::invoke_action::Event {
            r#type: Some(Kind::Progress(Progress { message: m })),
        };
        let mut events = vec![progress(format!("noting {message:?}"))];
        let done = match crate::action::fails(&config) {
            true => Err("The note was told to fail.".to_string()),
            false => crate::action::note(self.store()?.dir(), &message),
        };
        let diagnostics = match done {
            Ok(()) => {
                events.push(progress("noted".into()));
                Vec::new()
            }
            Err(e) => error("Cannot note", e),
        };
        events.push(v6::invoke_action::Event {
            r#type: Some(Kind::Completed(Completed { diagnostics })),
        });
        let events: Vec<Result<_, Status>> = events.into_iter().map(Ok).collect();
        let stream = tokio_stream::iter(events);
        Ok(Response::new(match crate::action::pause(&config) {
            Some(pause) => Box::pin(tokio_stream::StreamExt::throttle(stream, pause)),
            None => Box::pin(stream),
        }))
    }

    async fn validate_action_config(
        &self,
        request: Request<v6::validate_action_config::Request>,
    ) -> Answer<v6::validate_action_config::Response> {
        let r = request.into_inner();
        action_type(&r.type_name)?;
        decode(r.config.as_ref(), &crate::action::config_type())?;
        Ok(Response::new(Default::default()))
    }

    type ListResourceStream = tonic::codegen::tokio_stream::Iter<
        std::vec::IntoIter<Result<v6::list_resource::Event, Status>>,
    >;

    async fn list_resource(
        &self,
        request: Request<v6::list_resource::Request>,
    ) -> Answer<Self::ListResourceStream> {
        let r = request.into_inner();
        if r.type_name != OBJECT || !identity::declared() {
            return Err(unknown_type(&r.type_name));
        }
        let prefix = crate::list::prefix(&decode(r.config.as_ref(), &crate::list::config_type())?);
        let events = match object::all(self.store()?) {
            _ if prefix == "refuse" => vec![v6::list_resource::Event {
                diagnostic: error("Cannot list", "The prefix \"refuse\" is refused."),
                ..Default::default()
            }],
            Ok(objects) => crate::list::found(objects, &prefix)
                .into_iter()
                .map(|o| {
                    Ok::<_, Status>(v6::list_resource::Event {
                        identity: identity_data(&identity::of(&o))?,
                        display_name: crate::list::name(&o),
                        resource_object: match r.include_resource_object {
                            true => encode(&o, &schema::object_value_type())?,
                            false => None,
                        },
                        diagnostic: Vec::new(),
                    })
                })
                .collect::<Result<_, _>>()?,
            Err(e) => vec![v6::list_resource::Event {
                diagnostic: error("Cannot list", e),
                ..Default::default()
            }],
        };
        let events: Vec<Result<_, Status>> = events.into_iter().map(Ok).collect();
        Ok(Response::new(tonic::codegen::tokio_stream::iter(events)))
    }

    async fn validate_list_resource_config(
        &self,
        request: Request<v6::validate_list_resource_config::Request>,
    ) -> Answer<v6::validate_list_resource_config::Response> {
        let r = request.into_inner();
        let config = decode(r.config.as_ref(), &crate::list::config_type())?;
        let diagnostics = match crate::list::prefix(&config).contains(' ') {
            true => error("Invalid name_prefix", "A name prefix has no spaces."),
            false => Vec::new(),
        };
        Ok(Response::new(v6::validate_list_resource_config::Response {
            diagnostics,
        }))
    }

    async fn get_resource_identity_schemas(
        &self,
        _: Request<v6::get_resource_identity_schemas::Request>,
    ) -> Answer<v6::get_resource_identity_schemas::Response> {
        Ok(Response::new(identity::schemas()))
    }

    async fn upgrade_resource_identity(
        &self,
        request: Request<v6::upgrade_resource_identity::Request>,
    ) -> Answer<v6::upgrade_resource_identity::Response> {
        let r = request.into_inner();
        Managed::of(&r.type_name)?;
        let raw = r.raw_identity.map(|s| s.json).unwrap_or_default();
        let upgraded = serde_json::from_slice(&raw)
            .map_err(|e| e.to_string())
            .and_then(|json| identity::upgrade(r.version, &json));
        Ok(Response::new(match upgraded {
            Ok(v) => v6::upgrade_resource_identity::Response {
                upgraded_identity: identity_data(&v)?,
                diagnostics: Vec::new(),
            },
            Err(e) => v6::upgrade_resource_identity::Response {
                upgraded_identity: None,
                diagnostics: error("Cannot upgrade the stored identity", e),
            },
        }))
    }

    async fn configure_provider(
        &self,
        request: Request<v6::configure_provider::Request>,
    ) -> Answer<v6::configure_provider::Response> {
        slow_configure().await;
        let config = decode(
            request.get_ref().config.as_ref(),
            &schema::provider_value_type(),
        )?;
        let configured = config
            .entries()
            .and_then(|a| a.get("store"))
            .and_then(Value::as_str)
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("STRATATEST_STORE").map(PathBuf::from));
        let diagnostics = match configured {
            None => diagnostics(vec![Problem {
                summary: "No store".into(),
                detail: "Set store, or STRATATEST_STORE in the environment.".into(),
                path: vec![Step::Attr("store")],
            }]),
            Some(dir) => match self.open(&dir) {
                Ok(()) => Vec::new(),
                Err(e) => error("Cannot open the store", e),
            },
        };
        Ok(Response::new(v6::configure_provider::Response {
            diagnostics,
        }))
    }

    async fn read_resource(
        &self,
        request: Request<v6::read_resource::Request>,
    ) -> Answer<v6::read_resource::Response> {
        let r = request.into_inner();
        let kind = Managed::of(&r.type_name)?;
        let ty = kind.value_type();
        let current = decode(r.current_state.as_ref(), &ty)?;
        let stored = sent_identity(r.current_identity.as_ref())?;
        if let Some(why) = identity::changed(&stored, &current) {
            return Ok(Response::new(v6::read_resource::Response {
                diagnostics: error("Unexpected Identity Change", why),
                ..Default::default()
            }));
        }
        let store = self.store_of(kind)?;
        let found = match kind {
            Managed::Object => object::read(store, &current),
            Managed::Rules | Managed::LooseRules => rules::read(store, &current, &ty),
        };
        Ok(Response::new(match found {
            Ok(found) => {
                let found = found.unwrap_or(Value::Null(ty.clone()));
                v6::read_resource::Response {
                    new_state: encode(&found, &ty)?,
                    private: r.private,
                    new_identity: identity_of(kind, &found)?,
                    ..Default::default()
                }
            }
            Err(e) => v6::read_resource::Response {
                diagnostics: error("Cannot read the object", e),
                ..Default::default()
            },
        }))
    }

    async fn plan_resource_change(
        &self,
        request: Request<v6::plan_resource_change::Request>,
    ) -> Answer<v6::plan_resource_change::Response> {
        let r = request.into_inner();
        let kind = Managed::of(&r.type_name)?;
        let ty = kind.value_type();
        let prior = decode(r.prior_state.as_ref(), &ty)?;
        let proposed = decode(r.proposed_new_state.as_ref(), &ty)?;
        let planned = match kind {
            Managed::Object => object::plan(&prior, &proposed),
            Managed::Rules | Managed::LooseRules => {
                let (planned, requires_replace) = rules::plan(&prior, &proposed);
                object::Planned {
                    planned,
                    requires_replace,
                    problems: Vec::new(),
                }
            }
        };
        if !planned.problems.is_empty() {
            return Ok(Response::new(v6::plan_resource_change::Response {
                diagnostics: diagnostics(planned.problems),
                ..Default::default()
            }));
        }
        let replace = planned
            .requires_replace
            .into_iter()
            .map(|a| v6::AttributePath {
                steps: vec![step(Step::Attr(a))],
            });
        Ok(Response::new(v6::plan_resource_change::Response {
            planned_identity: identity_of(kind, &planned.planned)?,
            planned_state: encode(&planned.planned, &ty)?,
            requires_replace: replace.collect(),
            planned_private: if proposed.is_null() {
                Vec::new()
            } else {
                PRIVATE.to_vec()
            },
            ..Default::default()
        }))
    }

    async fn apply_resource_change(
        &self,
        request: Request<v6::apply_resource_change::Request>,
    ) -> Answer<v6::apply_resource_change::Response> {
        let r = request.into_inner();
        let kind = Managed::of(&r.type_name)?;
        let ty = kind.value_type();
        let prior = decode(r.prior_state.as_ref(), &ty)?;
        let planned = decode(r.planned_state.as_ref(), &ty)?;
        let config = decode(r.config.as_ref(), &ty)?;
        let store = self.store_of(kind)?;
        let refused = match kind {
            Managed::Object => object::refused(&planned),
            Managed::Rules | Managed::LooseRules => None,
        };
        if kind == Managed::Object && object::crashes(&planned) {
            // As a Go provider panics: the trace on stderr, exit code 2,
            // the call never answered.
            eprintln!("panic: stratatest_object was told to crash\n\ngoroutine 1 [running]:\nmain.apply()");
            std::process::exit(2);
        }
        if let Some(problem) = refused {
            return Ok(Response::new(v6::apply_resource_change::Response {
                new_state: r.prior_state,
                diagnostics: diagnostics(vec![problem]),
                ..Default::default()
            }));
        }
        let applied = match kind {
            Managed::Object => object::apply(store, &prior, &planned, &config),
            Managed::Rules | Managed::LooseRules => rules::apply(store, &prior, &planned, &ty),
        };
        Ok(Response::new(match applied {
            // An object whose name starts "broken" is made or changed
            // and then fails, as real objects fail to become ready:
            // the client must keep what was done.
            Ok(new) if kind == Managed::Object && object::is_broken(&new) => {
                v6::apply_resource_change::Response {
                    new_state: encode(&new, &ty)?,
                    private: r.planned_private,
                    diagnostics: error(
                        "Object not ready",
                        "The object was written but never became ready.",
                    ),
                    ..Default::default()
                }
            }
            Ok(new) => v6::apply_resource_change::Response {
                new_identity: identity_of(kind, &new)?,
                new_state: encode(&new, &ty)?,
                private: r.planned_private,
                ..Default::default()
            },
            Err(e) => v6::apply_resource_change::Response {
                // A failed apply leaves the object as it was.
                new_state: r.prior_state,
                diagnostics: error("Cannot change the object", e),
                ..Default::default()
            },
        }))
    }

    async fn import_resource_state(
        &self,
        request: Request<v6::import_resource_state::Request>,
    ) -> Answer<v6::import_resource_state::Response> {
        let r = request.into_inner();
        if r.type_name != OBJECT {
            return Err(unknown_type(&r.type_name));
        }
        let store = self.store()?;
        let wanted = sent_identity(r.identity.as_ref())?;
        let id = identity::id_in(&wanted).unwrap_or(r.id);
        Ok(Response::new(match object::import(store, &id) {
            Ok(Some(found)) => v6::import_resource_state::Response {
                imported_resources: vec![v6::import_resource_state::ImportedResource {
                    type_name: r.type_name,
                    state: encode(&found, &schema::object_value_type())?,
                    private: PRIVATE.to_vec(),
                    identity: identity_data(&identity::of(&found))?,
                }],
                ..Default::default()
            },
            Ok(None) => v6::import_resource_state::Response {
                diagnostics: error(
                    "Cannot import non-existent remote object",
                    format!("There is no object {id:?} in the store."),
                ),
                ..Default::default()
            },
            Err(e) => v6::import_resource_state::Response {
                diagnostics: error("Cannot import the object", e),
                ..Default::default()
            },
        }))
    }

    async fn move_resource_state(
        &self,
        request: Request<v6::move_resource_state::Request>,
    ) -> Answer<v6::move_resource_state::Response> {
        let r = request.into_inner();
        let source = object::Source {
            provider: &r.source_provider_address,
            type_name: &r.source_type_name,
            version: r.source_schema_version,
        };
        let raw = r.source_state.map(|s| s.json).unwrap_or_default();
        let moved = if r.target_type_name == OBJECT {
            serde_json::from_slice(&raw)
                .map_err(|e| e.to_string())
                .and_then(|json| object::moved(&source, &json))
        } else {
            Err(format!("{} takes no moves", r.target_type_name))
        };
        Ok(Response::new(match moved {
            Ok(v) => v6::move_resource_state::Response {
                target_state: encode(&v, &schema::object_value_type())?,
                target_private: PRIVATE.to_vec(),
                target_identity: identity_data(&identity::of(&v))?,
                ..Default::default()
            },
            Err(e) => v6::move_resource_state::Response {
                diagnostics: error("Unsupported move", e),
                ..Default::default()
            },
        }))
    }

    async fn read_data_source(
        &self,
        request: Request<v6::read_data_source::Request>,
    ) -> Answer<v6::read_data_source::Response> {
        let r = request.into_inner();
        let ty = schema::lookup_value_type();
        let config = decode(r.config.as_ref(), &ty)?;
        let store = self.store()?;
        Ok(Response::new(match object::lookup(store, &config) {
            Ok(found) => v6::read_data_source::Response {
                state: encode(&found, &ty)?,
                ..Default::default()
            },
            Err(e) => v6::read_data_source::Response {
                diagnostics: error("Object not found", e),
                ..Default::default()
            },
        }))
    }

    async fn validate_ephemeral_resource_config(
        &self,
        request: Request<v6::validate_ephemeral_resource_config::Request>,
    ) -> Answer<v6::validate_ephemeral_resource_config::Response> {
        let r = request.into_inner();
        token_type(&r.type_name)?;
        let config = decode(r.config.as_ref(), &schema::token_value_type())?;
        Ok(Response::new(
            v6::validate_ephemeral_resource_config::Response {
                diagnostics: diagnostics(token::validate(&config)),
            },
        ))
    }

    async fn open_ephemeral_resource(
        &self,
        request: Request<v6::open_ephemeral_resource::Request>,
    ) -> Answer<v6::open_ephemeral_resource::Response> {
        let r = request.into_inner();
        token_type(&r.type_name)?;
        let ty = schema::token_value_type();
        let config = decode(r.config.as_ref(), &ty)?;
        Ok(Response::new(match token::open(self.store()?, &config) {
            Ok(opened) => v6::open_ephemeral_resource::Response {
                result: encode(&opened.result, &ty)?,
                private: Some(opened.private),
                renew_at: opened.renew_at.map(timestamp),
                ..Default::default()
            },
            Err(e) => v6::open_ephemeral_resource::Response {
                diagnostics: error("Token refused", e),
                ..Default::default()
            },
        }))
    }

    async fn renew_ephemeral_resource(
        &self,
        request: Request<v6::renew_ephemeral_resource::Request>,
    ) -> Answer<v6::renew_ephemeral_resource::Response> {
        let r = request.into_inner();
        token_type(&r.type_name)?;
        let private = r.private.unwrap_or_default();
        let renew_at = token::renew(self.store()?, &private).map_err(Status::internal)?;
        Ok(Response::new(v6::renew_ephemeral_resource::Response {
            private: Some(private),
            renew_at: renew_at.map(timestamp),
            ..Default::default()
        }))
    }

    async fn close_ephemeral_resource(
        &self,
        request: Request<v6::close_ephemeral_resource::Request>,
    ) -> Answer<v6::close_ephemeral_resource::Response> {
        let r = request.into_inner();
        token_type(&r.type_name)?;
        let private = r.private.unwrap_or_default();
        token::close(self.store()?, &private).map_err(Status::internal)?;
        Ok(Response::new(Default::default()))
    }

    async fn get_functions(
        &self,
        _: Request<v6::get_functions::Request>,
    ) -> Answer<v6::get_functions::Response> {
        Ok(Response::new(v6::get_functions::Response {
            functions: crate::functions::declared(),
            diagnostics: Vec::new(),
        }))
    }

    async fn call_function(
        &self,
        request: Request<v6::call_function::Request>,
    ) -> Answer<v6::call_function::Response> {
        let r = request.into_inner();
        let args = r
            .arguments
            .iter()
            .map(|a| decode(Some(a), &Type::String))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Response::new(
            match crate::functions::call(&r.name, &args) {
                Ok(text) => v6::call_function::Response {
                    result: encode(&Value::string(text), &Type::String)?,
                    error: None,
                },
                Err(e) => v6::call_function::Response {
                    result: None,
                    error: Some(e),
                },
            },
        ))
    }

    async fn stop_provider(
        &self,
        _: Request<v6::stop_provider::Request>,
    ) -> Answer<v6::stop_provider::Response> {
        Ok(Response::new(Default::default()))
    }
}

/// With `STRATATEST_CONFIGURE_MS` set, a configure logs `configure`, takes
/// that long (as a provider that checks its credentials with a call), and
/// logs `configured`: how a client's configurations of several processes
/// overlap.
async fn slow_configure() {
    let Some(ms) = std::env::var("STRATATEST_CONFIGURE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
    else {
        return;
    };
    crate::log("configure");
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    crate::log("configured");
}
