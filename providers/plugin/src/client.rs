//! A running provider's RPCs, the same calls whichever protocol version it
//! chose. Requests and responses are protocol 6's messages; for a version
//! 5 provider they cross unchanged where the two versions agree on the
//! wire, and the schema and provider validation are translated.

use crate::launch::{Launch, LaunchError, Running};
use crate::proto::tfplugin5;
use crate::proto::tfplugin6::{self as v6, provider_client::ProviderClient as V6Client};
use tfplugin5::provider_client::ProviderClient as V5Client;
use tonic::transport::Channel;

#[derive(Clone)]
enum Stub {
    V5(V5Client<Channel>),
    V6(V6Client<Channel>),
}

/// A provider process and its gRPC client.
pub struct Provider {
    running: Running,
    stub: Stub,
}

/// A call the provider did not answer (it crashed, or refused the call).
#[derive(Debug)]
pub struct RpcError {
    pub method: &'static str,
    pub code: tonic::Code,
    pub message: String,
    /// How the process ended, when it did: the call went unanswered
    /// because the provider crashed.
    pub exited: Option<std::process::ExitStatus>,
    /// The provider's last log lines, where a crash leaves its reason.
    pub log: Vec<String>,
}

impl std::error::Error for RpcError {}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let method = rpc_name(self.method);
        match self.exited {
            Some(status) => write!(f, "the provider crashed ({status}) during {method}")?,
            None => write!(
                f,
                "the provider failed to answer {method}: {}",
                self.message
            )?,
        }
        f.write_str(&crate::launch::log_suffix(&self.log))
    }
}

/// The protocol's name for a call (`ApplyResourceChange`), as Terraform's
/// messages and the provider's own logs give it.
fn rpc_name(method: &str) -> String {
    method
        .split('_')
        .flat_map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase())
                .into_iter()
                .chain(chars)
        })
        .collect()
}

/// One RPC both versions have, with the message types they share.
macro_rules! shared_rpc {
    ($(#[$doc:meta])* $name:ident($req:ty) -> $resp:ty, v5: $v5:ident, v6: $v6:ident) => {
        $(#[$doc])*
        pub async fn $name(&self, request: $req) -> Result<$resp, RpcError> {
            let reply = match self.stub.clone() {
                Stub::V5(mut c) => c.$v5(request).await,
                Stub::V6(mut c) => c.$v6(request).await,
            };
            self.answer(stringify!($v6), reply).await
        }
    };
}

impl Provider {
    pub async fn start(launch: &Launch) -> Result<Provider, LaunchError> {
        let running = Running::start(launch).await?;
        let channel = running.channel.clone();
        // go-plugin's clients take messages of any size.
        let stub = match running.protocol_version {
            5 => Stub::V5(
                V5Client::new(channel)
                    .max_decoding_message_size(usize::MAX)
                    .max_encoding_message_size(usize::MAX),
            ),
            _ => Stub::V6(
                V6Client::new(channel)
                    .max_decoding_message_size(usize::MAX)
                    .max_encoding_message_size(usize::MAX),
            ),
        };
        Ok(Provider { running, stub })
    }

    /// The protocol version the provider chose.
    pub fn protocol_version(&self) -> u32 {
        self.running.protocol_version
    }

    /// The provider's last log lines.
    pub fn log(&self) -> Vec<String> {
        self.running.log.tail()
    }

    pub async fn stop(&self) {
        self.running.stop().await
    }

    async fn answer<T>(
        &self,
        method: &'static str,
        reply: Result<tonic::Response<T>, tonic::Status>,
    ) -> Result<T, RpcError> {
        match reply {
            Ok(answer) => Ok(answer.into_inner()),
            Err(status) => Err(RpcError {
                method,
                code: status.code(),
                message: status.message().to_string(),
                // A refusal comes from a live provider; only a broken
                // connection is worth waiting on the process for.
                exited: match status.code() {
                    tonic::Code::Unavailable
                    | tonic::Code::Unknown
                    | tonic::Code::Cancelled
                    | tonic::Code::Internal => self.running.exited().await,
                    _ => None,
                },
                log: self.running.log.tail(),
            }),
        }
    }

    /// Every schema the provider has (version 5's translated).
    pub async fn get_provider_schema(&self) -> Result<v6::get_provider_schema::Response, RpcError> {
        match self.stub.clone() {
            Stub::V6(mut c) => {
                let reply = c
                    .get_provider_schema(v6::get_provider_schema::Request {})
                    .await;
                self.answer("GetProviderSchema", reply).await
            }
            Stub::V5(mut c) => {
                let reply = c
                    .get_schema(tfplugin5::get_provider_schema::Request {})
                    .await;
                self.answer("GetProviderSchema", reply)
                    .await
                    .map(from_v5::schemas)
            }
        }
    }

    /// The identity schemas of the managed resource types (protocol 6.9);
    /// none from a provider older than that, as Terraform takes it.
    pub async fn get_resource_identity_schemas(
        &self,
    ) -> Result<v6::get_resource_identity_schemas::Response, RpcError> {
        let request = v6::get_resource_identity_schemas::Request {};
        let reply = match self.stub.clone() {
            Stub::V5(mut c) => c.get_resource_identity_schemas(request).await,
            Stub::V6(mut c) => c.get_resource_identity_schemas(request).await,
        };
        match reply {
            Err(status) if status.code() == tonic::Code::Unimplemented => Ok(Default::default()),
            reply => self.answer("GetResourceIdentitySchemas", reply).await,
        }
    }

    /// Checks the `provider` block (version 5's PrepareProviderConfig,
    /// whose prepared value Terraform no longer uses either).
    pub async fn validate_provider_config(
        &self,
        request: v6::validate_provider_config::Request,
    ) -> Result<v6::validate_provider_config::Response, RpcError> {
        match self.stub.clone() {
            Stub::V6(mut c) => {
                let reply = c.validate_provider_config(request).await;
                self.answer("ValidateProviderConfig", reply).await
            }
            Stub::V5(mut c) => {
                let request = tfplugin5::prepare_provider_config::Request {
                    config: request.config,
                };
                let reply = c.prepare_provider_config(request).await;
                self.answer("ValidateProviderConfig", reply).await.map(|r| {
                    v6::validate_provider_config::Response {
                        diagnostics: r.diagnostics,
                    }
                })
            }
        }
    }

    shared_rpc!(get_metadata(v6::get_metadata::Request) -> v6::get_metadata::Response,
        v5: get_metadata, v6: get_metadata);
    shared_rpc!(validate_resource_config(v6::validate_resource_config::Request)
        -> v6::validate_resource_config::Response,
        v5: validate_resource_type_config, v6: validate_resource_config);
    shared_rpc!(validate_data_resource_config(v6::validate_data_resource_config::Request)
        -> v6::validate_data_resource_config::Response,
        v5: validate_data_source_config, v6: validate_data_resource_config);
    shared_rpc!(upgrade_resource_identity(v6::upgrade_resource_identity::Request)
        -> v6::upgrade_resource_identity::Response,
        v5: upgrade_resource_identity, v6: upgrade_resource_identity);
    shared_rpc!(upgrade_resource_state(v6::upgrade_resource_state::Request)
        -> v6::upgrade_resource_state::Response,
        v5: upgrade_resource_state, v6: upgrade_resource_state);
    shared_rpc!(configure_provider(v6::configure_provider::Request)
        -> v6::configure_provider::Response,
        v5: configure, v6: configure_provider);
    shared_rpc!(read_resource(v6::read_resource::Request) -> v6::read_resource::Response,
        v5: read_resource, v6: read_resource);
    shared_rpc!(plan_resource_change(v6::plan_resource_change::Request)
        -> v6::plan_resource_change::Response,
        v5: plan_resource_change, v6: plan_resource_change);
    shared_rpc!(apply_resource_change(v6::apply_resource_change::Request)
        -> v6::apply_resource_change::Response,
        v5: apply_resource_change, v6: apply_resource_change);
    shared_rpc!(import_resource_state(v6::import_resource_state::Request)
        -> v6::import_resource_state::Response,
        v5: import_resource_state, v6: import_resource_state);
    shared_rpc!(move_resource_state(v6::move_resource_state::Request)
        -> v6::move_resource_state::Response,
        v5: move_resource_state, v6: move_resource_state);
    shared_rpc!(read_data_source(v6::read_data_source::Request) -> v6::read_data_source::Response,
        v5: read_data_source, v6: read_data_source);
    shared_rpc!(validate_ephemeral_resource_config(v6::validate_ephemeral_resource_config::Request)
        -> v6::validate_ephemeral_resource_config::Response,
        v5: validate_ephemeral_resource_config, v6: validate_ephemeral_resource_config);
    shared_rpc!(open_ephemeral_resource(v6::open_ephemeral_resource::Request)
        -> v6::open_ephemeral_resource::Response,
        v5: open_ephemeral_resource, v6: open_ephemeral_resource);
    shared_rpc!(renew_ephemeral_resource(v6::renew_ephemeral_resource::Request)
        -> v6::renew_ephemeral_resource::Response,
        v5: renew_ephemeral_resource, v6: renew_ephemeral_resource);
    shared_rpc!(close_ephemeral_resource(v6::close_ephemeral_resource::Request)
        -> v6::close_ephemeral_resource::Response,
        v5: close_ephemeral_resource, v6: close_ephemeral_resource);
    /// The objects a list resource finds (a stream of events), read until
    /// the stream ends or `limit` of them have come, as Terraform reads it.
    pub async fn list_resource(
        &self,
        request: v6::list_resource::Request,
    ) -> Result<Vec<v6::list_resource::Event>, RpcError> {
        let limit = usize::try_from(request.limit).unwrap_or(usize::MAX);
        let reply = match self.stub.clone() {
            Stub::V5(mut c) => c.list_resource(request).await,
            Stub::V6(mut c) => c.list_resource(request).await,
        };
        let mut stream = self.answer("ListResource", reply).await?;
        let mut events = Vec::new();
        while events.len() < limit {
            match stream.message().await {
                Ok(Some(event)) => events.push(event),
                Ok(None) => break,
                Err(status) => return self.answer("ListResource", Err(status)).await,
            }
        }
        Ok(events)
    }

    /// An action's stream, each event handed to `each` as it comes, read
    /// to the end.
    pub async fn invoke_action(
        &self,
        request: v6::invoke_action::Request,
        each: &(dyn Fn(v6::invoke_action::Event) + Send + Sync),
    ) -> Result<(), RpcError> {
        let reply = match self.stub.clone() {
            Stub::V5(mut c) => c.invoke_action(request).await,
            Stub::V6(mut c) => c.invoke_action(request).await,
        };
        let mut stream = self.answer("InvokeAction", reply).await?;
        loop {
            match stream.message().await {
                Ok(Some(event)) => each(event),
                Ok(None) => return Ok(()),
                Err(status) => return self.answer("InvokeAction", Err(status)).await,
            }
        }
    }

    shared_rpc!(plan_action(v6::plan_action::Request) -> v6::plan_action::Response,
        v5: plan_action, v6: plan_action);
    shared_rpc!(validate_action_config(v6::validate_action_config::Request)
        -> v6::validate_action_config::Response,
        v5: validate_action_config, v6: validate_action_config);
    shared_rpc!(validate_list_resource_config(v6::validate_list_resource_config::Request)
        -> v6::validate_list_resource_config::Response,
        v5: validate_list_resource_config, v6: validate_list_resource_config);
    shared_rpc!(call_function(v6::call_function::Request) -> v6::call_function::Response,
        v5: call_function, v6: call_function);
    shared_rpc!(
        /// Asks the provider to cancel what it is doing (an interrupted run).
        stop_provider(v6::stop_provider::Request) -> v6::stop_provider::Response,
        v5: stop, v6: stop_provider);
}

/// Version 5's schema messages as version 6's: the same, less nested
/// attributes.
mod from_v5 {
    use super::{tfplugin5 as v5, v6};

    pub fn schemas(r: v5::get_provider_schema::Response) -> v6::get_provider_schema::Response {
        let each = |m: std::collections::HashMap<String, v5::Schema>| {
            m.into_iter().map(|(k, s)| (k, schema(s))).collect()
        };
        v6::get_provider_schema::Response {
            provider: r.provider.map(schema),
            resource_schemas: each(r.resource_schemas),
            data_source_schemas: each(r.data_source_schemas),
            diagnostics: r.diagnostics,
            provider_meta: r.provider_meta.map(schema),
            server_capabilities: r.server_capabilities,
            functions: r.functions,
            ephemeral_resource_schemas: each(r.ephemeral_resource_schemas),
            list_resource_schemas: each(r.list_resource_schemas),
            action_schemas: r
                .action_schemas
                .into_iter()
                .map(|(k, a)| {
                    let s = v6::ActionSchema {
                        schema: a.schema.map(schema),
                    };
                    (k, s)
                })
                .collect(),
        }
    }

    fn schema(s: v5::Schema) -> v6::Schema {
        v6::Schema {
            version: s.version,
            block: s.block.map(block),
        }
    }

    fn block(b: v5::schema::Block) -> v6::schema::Block {
        v6::schema::Block {
            version: b.version,
            attributes: b.attributes.into_iter().map(attribute).collect(),
            block_types: b.block_types.into_iter().map(nested).collect(),
            description: b.description,
            description_kind: b.description_kind,
            deprecated: b.deprecated,
            deprecation_message: b.deprecation_message,
        }
    }

    fn attribute(a: v5::schema::Attribute) -> v6::schema::Attribute {
        v6::schema::Attribute {
            name: a.name,
            r#type: a.r#type,
            nested_type: None,
            description: a.description,
            required: a.required,
            optional: a.optional,
            computed: a.computed,
            sensitive: a.sensitive,
            description_kind: a.description_kind,
            deprecated: a.deprecated,
            write_only: a.write_only,
            deprecation_message: a.deprecation_message,
        }
    }

    fn nested(n: v5::schema::NestedBlock) -> v6::schema::NestedBlock {
        v6::schema::NestedBlock {
            type_name: n.type_name,
            block: n.block.map(block),
            nesting: n.nesting,
            min_items: n.min_items,
            max_items: n.max_items,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::rpc_name;

    #[test]
    fn calls_are_named_as_the_protocol_names_them() {
        assert_eq!(rpc_name("apply_resource_change"), "ApplyResourceChange");
        assert_eq!(rpc_name("GetProviderSchema"), "GetProviderSchema");
    }
}
