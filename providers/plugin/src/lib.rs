//! Terraform's provider plugin protocol, client side (issue 25). Today:
//! values as cty's msgpack encoding (`msgpack`), which every RPC of
//! protocols 5 and 6 carries them in.

pub mod msgpack;
