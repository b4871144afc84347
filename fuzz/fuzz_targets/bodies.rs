// Each target uses one of these; the corpus test uses them all.
#![allow(dead_code)]

//! What each fuzz target does with its input, kept apart from libFuzzer so
//! that `tests/fuzz_corpus.rs` replays the kept corpus and every input that
//! ever crashed through the very same code in the ordinary test suite.

use std::path::PathBuf;
use strata::config::{self, variables, ConfigScope, Module, Run};
use strata::diag::Sources;
use strata::eval::Evaluator;

/// Any text, as a configuration file (native and JSON) and as console
/// expressions: loading, validation, variable resolution, evaluation and
/// fmt must never panic.
pub fn load_eval(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut sources = Sources::default();
    let run = Run::new(PathBuf::from("/nonexistent"), "default");
    // No provider, so no argument is write-only.
    let write_only = |_: &config::Resource, _: &[String]| false;
    if let Ok(module) = config::load_text("fuzz.tf", text, &mut sources) {
        let _ = config::check::check_module(&module, &run, &write_only);
        let _ = variables::resolve(&module, &[], Vec::new(), &mut sources);
    }
    // The same text as Terraform's JSON syntax, and every JSON body read
    // as if its schema said each argument were a block.
    if let Ok(module) = config::load_text("fuzz.tf.json", text, &mut sources) {
        let _ = config::check::check_module(&module, &run, &write_only);
        for r in &module.resources {
            let mut diags = strata::diag::Diags::default();
            let _ = strata::syntax::json::blocks_by_schema(&r.body, &|_| Some(0), &mut diags);
        }
    }
    let empty = Module::default();
    let scope = ConfigScope::new(&empty, Default::default(), run);
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
}

/// Any bytes as a state document and as a journal: decoding either is an
/// error or a state, never a panic; a state that decodes encodes and
/// decodes again to the same state, and each object's attributes read.
pub fn state_decode(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(mut state) = strata_state::parse("fuzz", text) {
        for r in &state.resources {
            for i in &r.instances {
                let _ = i.attributes.json();
            }
        }
        if let Ok(again) = serde_json::to_string(&state) {
            match strata_state::parse("fuzz", &again) {
                Ok(back) => assert_eq!(back, state, "a state changed across a round trip"),
                Err(e) => panic!("a state strata wrote does not read back: {e}"),
            }
        }
        let _ = strata_state::journal::replay(text, &mut state);
    }
    let mut state = strata_state::State::new();
    let _ = strata_state::journal::replay(text, &mut state);
}

/// Any bytes as a saved plan file: decoding is an error or a plan, never a
/// panic, and a plan that decodes encodes and decodes again.
pub fn plan_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(saved) = strata::plan::Saved::decode(text) {
        let again = saved.encode();
        if let Err(e) = strata::plan::Saved::decode(&again) {
            panic!("a plan strata wrote does not read back: {e}");
        }
    }
}
