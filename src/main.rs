fn main() -> std::process::ExitCode {
    strata::cli::main()
}
