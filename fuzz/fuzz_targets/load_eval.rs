//! Any text, as a configuration file and as a console expression: loading,
//! validation, variable resolution, evaluation and fmt must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use strata::config::{self, variables, ConfigScope, Module};
use strata::diag::Sources;
use strata::eval::Evaluator;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut sources = Sources::default();
    if let Ok(module) = config::load_text("fuzz.tf", text, &mut sources) {
        let _ = config::check::check_module(&module, &[], &mut sources);
        let _ = variables::resolve(&module, &[], Vec::new(), &mut sources);
    }
    let empty = Module::default();
    let scope = ConfigScope::new(&empty, Default::default(), PathBuf::from("/nonexistent"));
    for line in text.lines().take(8) {
        let id = sources.add("<expr>", line.to_string());
        if let Ok(expr) = strata::syntax::parse_expr(id, line) {
            if let Ok(v) = Evaluator::new(&scope, PathBuf::from("/nonexistent")).eval(&expr) {
                let _ = v.to_json();
                let _ = strata::lang::display::show(&v);
            }
        }
    }
    let formatted = strata::fmt::format_source(text);
    let _ = strata::fmt::format_source(&formatted);
});
