//! Generates the protocol's messages and gRPC stubs from `proto/`, parsed
//! in Rust (protox), so building needs no `protoc`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = ["tfplugin6.proto", "tfplugin5.proto", "go_plugin.proto"];
    for f in files {
        println!("cargo:rerun-if-changed=proto/{f}");
    }
    let descriptors = protox::compile(files, ["proto"])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .compile_fds(descriptors)?;
    Ok(())
}
