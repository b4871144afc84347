//! Protocol 5, for the tests that need a version 5 provider (most real
//! providers still speak it): the same provider behind version 5's names.
//! Version 5 has no nested attributes, so `ports` is declared as what a
//! version 5 provider would declare: an attribute of type list(object).

use crate::provider::TestProvider;
use std::sync::Arc;
use strata_plugin::proto::tfplugin5::{self as v5, provider_server::Provider as V5};
use strata_plugin::proto::tfplugin6::{self as v6, provider_server::Provider as V6};
use strata_plugin::schema::attribute_type;
use strata_value::json::type_to_json;
use tonic::{Request, Response, Status};

pub struct Version5(pub Arc<TestProvider>);

type Answer<T> = Result<Response<T>, Status>;

fn schema(s: v6::Schema) -> Result<v5::Schema, Status> {
    Ok(v5::Schema {
        version: s.version,
        block: s.block.map(block).transpose()?,
    })
}

fn block(b: v6::schema::Block) -> Result<v5::schema::Block, Status> {
    Ok(v5::schema::Block {
        version: b.version,
        attributes: b
            .attributes
            .into_iter()
            .map(attribute)
            .collect::<Result<_, _>>()?,
        block_types: b
            .block_types
            .into_iter()
            .map(|n| {
                Ok(v5::schema::NestedBlock {
                    type_name: n.type_name,
                    block: n.block.map(block).transpose()?,
                    nesting: n.nesting,
                    min_items: n.min_items,
                    max_items: n.max_items,
                })
            })
            .collect::<Result<_, Status>>()?,
        description: b.description,
        description_kind: b.description_kind,
        deprecated: b.deprecated,
        deprecation_message: b.deprecation_message,
    })
}

fn attribute(a: v6::schema::Attribute) -> Result<v5::schema::Attribute, Status> {
    let ty = attribute_type(&a, &a.name).map_err(|e| Status::internal(e.to_string()))?;
    Ok(v5::schema::Attribute {
        r#type: type_to_json(&ty).to_string().into_bytes(),
        name: a.name,
        description: a.description,
        required: a.required,
        optional: a.optional,
        computed: a.computed,
        sensitive: a.sensitive,
        description_kind: a.description_kind,
        deprecated: a.deprecated,
        write_only: a.write_only,
        deprecation_message: a.deprecation_message,
    })
}

#[tonic::async_trait]
impl V5 for Version5 {
    async fn get_metadata(
        &self,
        r: Request<v6::get_metadata::Request>,
    ) -> Answer<v6::get_metadata::Response> {
        self.0.get_metadata(r).await
    }

    type ListResourceStream = <TestProvider as V6>::ListResourceStream;
    type InvokeActionStream = <TestProvider as V6>::InvokeActionStream;

    async fn plan_action(
        &self,
        r: Request<v6::plan_action::Request>,
    ) -> Answer<v6::plan_action::Response> {
        self.0.plan_action(r).await
    }

    async fn invoke_action(
        &self,
        r: Request<v6::invoke_action::Request>,
    ) -> Answer<Self::InvokeActionStream> {
        self.0.invoke_action(r).await
    }

    async fn validate_action_config(
        &self,
        r: Request<v6::validate_action_config::Request>,
    ) -> Answer<v6::validate_action_config::Response> {
        self.0.validate_action_config(r).await
    }

    async fn list_resource(
        &self,
        r: Request<v6::list_resource::Request>,
    ) -> Answer<Self::ListResourceStream> {
        self.0.list_resource(r).await
    }

    async fn validate_list_resource_config(
        &self,
        r: Request<v6::validate_list_resource_config::Request>,
    ) -> Answer<v6::validate_list_resource_config::Response> {
        self.0.validate_list_resource_config(r).await
    }

    async fn get_resource_identity_schemas(
        &self,
        r: Request<v6::get_resource_identity_schemas::Request>,
    ) -> Answer<v6::get_resource_identity_schemas::Response> {
        self.0.get_resource_identity_schemas(r).await
    }

    async fn upgrade_resource_identity(
        &self,
        r: Request<v6::upgrade_resource_identity::Request>,
    ) -> Answer<v6::upgrade_resource_identity::Response> {
        self.0.upgrade_resource_identity(r).await
    }

    async fn get_schema(
        &self,
        _: Request<v5::get_provider_schema::Request>,
    ) -> Answer<v5::get_provider_schema::Response> {
        let six = self
            .0
            .get_provider_schema(Request::new(v6::get_provider_schema::Request {}))
            .await?;
        let six = six.into_inner();
        let each = |m: std::collections::HashMap<String, v6::Schema>| {
            m.into_iter()
                .map(|(k, s)| Ok((k, schema(s)?)))
                .collect::<Result<_, Status>>()
        };
        Ok(Response::new(v5::get_provider_schema::Response {
            provider: six.provider.map(schema).transpose()?,
            resource_schemas: each(six.resource_schemas)?,
            data_source_schemas: each(six.data_source_schemas)?,
            diagnostics: six.diagnostics,
            provider_meta: six.provider_meta.map(schema).transpose()?,
            server_capabilities: six.server_capabilities,
            functions: six.functions,
            ephemeral_resource_schemas: each(six.ephemeral_resource_schemas)?,
            list_resource_schemas: each(six.list_resource_schemas)?,
            action_schemas: six
                .action_schemas
                .into_iter()
                .map(|(k, a)| {
                    let s = a.schema.map(schema).transpose()?;
                    Ok((k, v5::ActionSchema { schema: s }))
                })
                .collect::<Result<_, Status>>()?,
        }))
    }

    async fn prepare_provider_config(
        &self,
        r: Request<v5::prepare_provider_config::Request>,
    ) -> Answer<v5::prepare_provider_config::Response> {
        let config = r.into_inner().config;
        let six = v6::validate_provider_config::Request {
            config: config.clone(),
        };
        let checked = self
            .0
            .validate_provider_config(Request::new(six))
            .await?
            .into_inner();
        Ok(Response::new(v5::prepare_provider_config::Response {
            prepared_config: config,
            diagnostics: checked.diagnostics,
        }))
    }

    async fn validate_resource_type_config(
        &self,
        r: Request<v6::validate_resource_config::Request>,
    ) -> Answer<v6::validate_resource_config::Response> {
        self.0.validate_resource_config(r).await
    }

    async fn validate_data_source_config(
        &self,
        r: Request<v6::validate_data_resource_config::Request>,
    ) -> Answer<v6::validate_data_resource_config::Response> {
        self.0.validate_data_resource_config(r).await
    }

    async fn upgrade_resource_state(
        &self,
        r: Request<v6::upgrade_resource_state::Request>,
    ) -> Answer<v6::upgrade_resource_state::Response> {
        self.0.upgrade_resource_state(r).await
    }

    async fn configure(
        &self,
        r: Request<v6::configure_provider::Request>,
    ) -> Answer<v6::configure_provider::Response> {
        self.0.configure_provider(r).await
    }

    async fn read_resource(
        &self,
        r: Request<v6::read_resource::Request>,
    ) -> Answer<v6::read_resource::Response> {
        self.0.read_resource(r).await
    }

    async fn plan_resource_change(
        &self,
        r: Request<v6::plan_resource_change::Request>,
    ) -> Answer<v6::plan_resource_change::Response> {
        self.0.plan_resource_change(r).await
    }

    async fn apply_resource_change(
        &self,
        r: Request<v6::apply_resource_change::Request>,
    ) -> Answer<v6::apply_resource_change::Response> {
        self.0.apply_resource_change(r).await
    }

    async fn import_resource_state(
        &self,
        r: Request<v6::import_resource_state::Request>,
    ) -> Answer<v6::import_resource_state::Response> {
        self.0.import_resource_state(r).await
    }

    async fn move_resource_state(
        &self,
        r: Request<v6::move_resource_state::Request>,
    ) -> Answer<v6::move_resource_state::Response> {
        self.0.move_resource_state(r).await
    }

    async fn read_data_source(
        &self,
        r: Request<v6::read_data_source::Request>,
    ) -> Answer<v6::read_data_source::Response> {
        self.0.read_data_source(r).await
    }

    async fn validate_ephemeral_resource_config(
        &self,
        r: Request<v6::validate_ephemeral_resource_config::Request>,
    ) -> Answer<v6::validate_ephemeral_resource_config::Response> {
        self.0.validate_ephemeral_resource_config(r).await
    }

    async fn open_ephemeral_resource(
        &self,
        r: Request<v6::open_ephemeral_resource::Request>,
    ) -> Answer<v6::open_ephemeral_resource::Response> {
        self.0.open_ephemeral_resource(r).await
    }

    async fn renew_ephemeral_resource(
        &self,
        r: Request<v6::renew_ephemeral_resource::Request>,
    ) -> Answer<v6::renew_ephemeral_resource::Response> {
        self.0.renew_ephemeral_resource(r).await
    }

    async fn close_ephemeral_resource(
        &self,
        r: Request<v6::close_ephemeral_resource::Request>,
    ) -> Answer<v6::close_ephemeral_resource::Response> {
        self.0.close_ephemeral_resource(r).await
    }

    async fn get_functions(
        &self,
        r: Request<v6::get_functions::Request>,
    ) -> Answer<v6::get_functions::Response> {
        self.0.get_functions(r).await
    }

    async fn call_function(
        &self,
        r: Request<v6::call_function::Request>,
    ) -> Answer<v6::call_function::Response> {
        self.0.call_function(r).await
    }

    async fn stop(
        &self,
        r: Request<v6::stop_provider::Request>,
    ) -> Answer<v6::stop_provider::Response> {
        self.0.stop_provider(r).await
    }
}
