// On Linux the strata binary is linked as a fixed-address executable, not
// a position-independent one: a PIE of this size carries ~175 000 relative
// relocations that the loader applies, page by page, at every start (3-4
// ms of each command's 7). Go's linker, and so Terraform, makes the same
// kind of executable there.
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bin=strata=-no-pie");
    }
}
