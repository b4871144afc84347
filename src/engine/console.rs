//! `strata console`: expressions evaluated where the configuration
//! would evaluate them, over the state or over a plan.

use super::console_scope as scope;
use super::view::View;
use crate::builtin::Drivers;
use crate::config::variables::{self, CliInput};
use crate::config::{self, ConfigScope};
use crate::diag::{Diag, Diags, Sources};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// What `console -plan` plans with: the console's variables and state.
fn console_plan_options(
    at: &Consoled<'_>,
    inputs: &[CliInput],
) -> Result<crate::engine::Options, Diags> {
    Ok(crate::engine::Options {
        inputs: inputs.to_vec(),
        state: at.state.map(Path::to_path_buf),
        workspace: at.workspace.to_string(),
        ..Default::default()
    })
}

/// Where the console evaluates.
pub struct Consoled<'a> {
    pub path: Option<&'a Path>,
    /// `-state=FILE`: this state's resources, not the backend's.
    pub state: Option<&'a Path>,
    /// `-plan`: as a plan would leave them.
    pub plan: bool,
    pub workspace: &'a str,
    /// `-scope=module.net[0]`: evaluate in that module instance
    /// (Terraform 1.16).
    pub scope: Option<&'a str>,
}

/// Where the console reads expressions and writes answers.
pub struct Terminal<'t> {
    pub input: &'t mut dyn BufRead,
    pub output: &'t mut dyn Write,
    /// How it answers: at a prompt (a person at a terminal), with the
    /// last answer of what was piped in (as Terraform's console), or with
    /// one JSON document a line (`-json`).
    pub form: ConsoleForm,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ConsoleForm {
    Prompt,
    Piped,
    Json,
}

/// `strata console`; `view` sees the plan `-plan` makes.
pub fn console(
    at: Consoled<'_>,
    inputs: &[CliInput],
    terminal: Terminal<'_>,
    view: &mut dyn View,
    (sources, drivers): (&mut Sources, &Drivers),
) -> Result<(), Diags> {
    let Terminal {
        input,
        output,
        form,
    } = terminal;
    let run = |scope: &dyn crate::eval::Scope, dir: PathBuf, sources: &mut Sources| {
        let io =
            |e: std::io::Error| Diags::from(Diag::new("strata::io", "I/O error", e.to_string()));
        match form {
            ConsoleForm::Prompt => {
                crate::console::interactive(input, output, scope, dir).map_err(io)
            }
            ConsoleForm::Json => crate::console::run_json(input, output, scope, dir).map_err(io),
            ConsoleForm::Piped => {
                let answered = crate::console::piped(input, output, scope, dir, sources);
                answered.map_err(io)?.map_err(Diags::from)
            }
        }
    };
    // As `terraform console`: the working directory's configuration when
    // there is one.
    let here = Path::new(".");
    let path = at.path.or_else(|| {
        config::config_files(here)
            .is_ok_and(|f| !f.is_empty())
            .then_some(here)
    });
    let Some(p) = path else {
        if !inputs.is_empty() {
            return Err(Diag::new(
                "strata::cli",
                "Variables without a configuration",
                "--var and --var-file need a configuration PATH that declares the variables.",
            )
            .into());
        }
        // Like `terraform console` in an empty directory: path.module is ".".
        let module = config::Module {
            dir: PathBuf::from("."),
            ..config::Module::default()
        };
        // The console calls `timestamp()` and its kind, as Terraform's does.
        let run_at = config::Run::new(PathBuf::from("."), at.workspace).calling();
        let scope = ConfigScope::new(&module, Default::default(), run_at);
        return run(&scope, PathBuf::from("."), sources);
    };
    let given = config::dynamic::Given::with_environment(inputs.to_vec());
    let mut module = config::load_given(p, sources, &given)?;
    let vars = variables::resolve(&module, inputs, variables::environment(), sources)?;
    let objects = match at.plan {
        true => {
            let opts = console_plan_options(&at, inputs)?;
            super::planned_values(p, &opts, view, sources, drivers)?
        }
        false => {
            let store = crate::backends::open(at.state, &module, at.workspace)?;
            crate::engine::state_values(&store, drivers)?
        }
    };
    let functions = Rc::new(crate::walk::Functions(drivers.clone()));
    let run_at = config::Run::with_functions(module.dir.clone(), at.workspace, functions).calling();
    // A cluster spec's module calls, as the state placed them.
    let store = crate::backends::open(at.state, &module, at.workspace)?;
    super::prepare::expanded_as_stored(
        &mut module,
        vars.clone(),
        &run_at,
        &store,
        drivers,
        sources,
    )?;
    let over = scope::Over {
        objects: &objects,
        run: &run_at,
        missing: scope::Missing::Unknown,
    };
    let root = scope::root(&module, vars, &over);
    let scoped = match at.scope {
        Some(text) => scope::instance(text, root, &over)?,
        None => root,
    };
    let scope = ConfigScope::new(scoped.module, scoped.vars, run_at).knowing(&scoped.known);
    run(&scope, scoped.module.dir.clone(), sources)
}
