//! The messages and gRPC stubs generated from `proto/` (build.rs).
#![allow(clippy::all, missing_docs)]

pub mod tfplugin6 {
    tonic::include_proto!("tfplugin6");
}

pub mod tfplugin5 {
    tonic::include_proto!("tfplugin5");
}

/// go-plugin's controller service.
pub mod plugin {
    tonic::include_proto!("plugin");
}
