fn main() {
    println!("cargo:rustc-link-arg-bin=strata=-no-pie");
}
