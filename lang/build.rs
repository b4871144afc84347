//! `modules/` is built into the language crate (`config::MODULES`, by
//! `include_dir!`), which tracks the files it read but not a file added
//! since: the crate is rebuilt whenever anything under `modules/` changes.
fn main() {
    println!("cargo:rerun-if-changed=../modules");
}
