//! The commands that read a configuration, a saved plan or a state and
//! change nothing: `validate`, `show`, `console`, `graph`, `version`.

use super::args::{price_list, ConsoleArgs, QueryArgs, ShowArgs, TestArgs, ValidateArgs};
use super::{print, printer, Context};
use crate::diag::{Diag, Diags};
use crate::engine::{ConsoleForm, Consoled, Terminal};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Success, or with `--json` Terraform's diagnostics document whatever
/// was found (exit 1 when it says invalid).
pub fn validate(a: ValidateArgs, cx: &mut Context<'_>) -> ExitCode {
    let r = cx.workspace.clone().and_then(|w| {
        let prices = price_list(a.prices.as_deref())?;
        let (sources, drivers) = (&mut cx.sources, cx.drivers);
        let warnings = crate::engine::validate(&a.path, &cx.inputs, &w, &prices, sources, drivers)?;
        if a.query {
            crate::engine::validate_query(&a.path, &cx.inputs, sources, drivers)?;
        }
        if !a.no_tests {
            crate::engine::validate_tests(&a.path, &a.test_directory, sources)?;
        }
        Ok(warnings)
    });
    if !a.json {
        // Terraform's words, the warnings above them.
        let r = r.map(|warnings| match warnings.is_empty() {
            true => printer::line("Success! The configuration is valid."),
            false => {
                // On stdout, in Terraform's layout, as its validate says them.
                printer::Printer::human().warnings(&warnings, &cx.sources);
                printer::line("Success! The configuration is valid, but there were some validation warnings as shown above.");
            }
        });
        return super::finish(r.map(|()| ExitCode::SUCCESS), &cx.sources);
    }
    let found = match r {
        Ok(warnings) => crate::diag::Diags(warnings),
        Err(d) => d,
    };
    let doc = found.to_json(&cx.sources);
    printer::line(&serde_json::to_string_pretty(&doc).unwrap_or_default());
    ExitCode::from(u8::from(!found.is_empty() && doc["valid"] == false))
}

/// `strata query`: what each list block found, as Terraform shows it.
pub fn query(a: QueryArgs, cx: &mut Context<'_>) -> ExitCode {
    let opts = crate::engine::Options {
        inputs: cx.inputs.clone(),
        generate_config_out: a.generate_config_out,
        json: a.json,
        query: true,
        ..Default::default()
    };
    let (sources, drivers) = (&mut cx.sources, cx.drivers);
    let r = crate::engine::query(std::path::Path::new("."), &opts, sources, drivers);
    let shown = r.map(|q| match a.json {
        true => {
            crate::render::query::json_lines(&q, crate::engine::TERRAFORM_LANGUAGE).join("\n")
                + "\n"
        }
        false => crate::render::query::human(&q),
    });
    let mut view = printer::Printer::human();
    view.json = a.json;
    view.finish(
        shown
            .and_then(|text| printer::text(Ok(text)))
            .map(|()| ExitCode::SUCCESS),
        &cx.sources,
    )
}

/// `strata test`: each file's runs as they go, then Terraform's summary;
/// exit 1 when a run failed.
pub fn test(a: TestArgs, cx: &mut Context<'_>) -> ExitCode {
    let req = crate::engine::TestRequest {
        dir: PathBuf::from("."),
        test_directory: a.test_directory,
        filter: a.filter,
        inputs: cx.inputs.clone(),
        verbose: a.verbose,
        parallelism: usize::from(a.parallelism),
    };
    let mut view = printer::Printer::human();
    view.json = a.json;
    view.opening();
    let mut recording = super::junit::Recording {
        printer: &mut view,
        junit: a.junit_xml.map(super::junit::Recorder::new),
    };
    let (sources, drivers) = (&mut cx.sources, cx.drivers);
    let r = crate::engine::test(&req, &mut recording, sources, drivers).and_then(|t| {
        // Written once the test concludes, whatever its verdict.
        if let Some(j) = &recording.junit {
            j.save(t.interrupted, sources)?;
        }
        Ok(t)
    });
    let r = r.map(|t| {
        let failed = t.failed + t.errored + t.files_failed;
        let skipped = match t.skipped {
            0 => String::new(),
            n => format!(", {n} skipped"),
        };
        let word = match (t.interrupted, t.success()) {
            (true, _) => "Interrupted!",
            (false, true) => "Success!",
            (false, false) => "Failure!",
        };
        let said = format!("{word} {} passed, {failed} failed{skipped}.", t.passed);
        match a.json {
            true => super::test_ui::summary(&t, &said),
            false => printer::line(&format!("\n{said}")),
        }
        ExitCode::from(u8::from(!t.success()))
    });
    view.finish(r, &cx.sources)
}

pub fn show(a: ShowArgs, cx: &mut Context<'_>) -> Result<(), Diags> {
    let workspace = cx.workspace.clone()?;
    let (planfile, state) = (a.planfile.as_deref(), a.state.as_deref());
    let (sources, drivers) = (&mut cx.sources, cx.drivers);
    let shown = crate::engine::show(planfile, state, &workspace, sources, drivers)?;
    let format = match a.json {
        true => crate::engine::Format::Json,
        false => crate::engine::Format::Human,
    };
    printer::out(&printer::showing(&shown, format));
    Ok(())
}

pub fn console(a: ConsoleArgs, cx: &mut Context<'_>) -> Result<(), Diags> {
    let workspace = cx.workspace.clone()?;
    let at = Consoled {
        path: a.path.as_deref(),
        state: a.state.as_deref(),
        plan: a.plan,
        workspace: &workspace,
        scope: a.scope.as_deref(),
    };
    let (stdin, stdout) = (std::io::stdin(), std::io::stdout());
    let form = match a.json {
        true => ConsoleForm::Json,
        false if stdin.is_terminal() => ConsoleForm::Prompt,
        false => ConsoleForm::Piped,
    };
    let terminal = Terminal {
        input: &mut stdin.lock(),
        output: &mut stdout.lock(),
        form,
    };
    let view = &mut printer::Printer::human();
    let (sources, drivers) = (&mut cx.sources, cx.drivers);
    crate::engine::console(at, &cx.inputs, terminal, view, (sources, drivers))
}

pub fn graph(
    path: PathBuf,
    format: crate::engine::GraphFormat,
    cx: &mut Context<'_>,
) -> Result<(), Diags> {
    let workspace = cx.workspace.clone()?;
    print(crate::engine::graph(
        &path,
        (&workspace, format),
        &mut cx.sources,
        cx.drivers,
    ))
}

/// `login`: not strata's yet; the ways strata takes a token instead.
pub fn login_refused(host: Option<&str>) -> Diags {
    let host = host.unwrap_or(crate::engine::DEFAULT_HOST);
    let variable = host.replace('-', "__").replace('.', "_");
    Diag::new(
        "strata::login",
        "strata does not log in yet",
        format!("login is Terraform's command for obtaining an API token for {host} through a web browser, which strata does not do yet. strata takes a token from a TF_TOKEN_{variable} variable, a credentials \"{host}\" block in the CLI configuration, or the file terraform login saves it in (~/.terraform.d/credentials.tfrc.json)."),
    )
    .into()
}

/// What strata knows of the language (`metadata functions -json`).
pub fn metadata(command: super::args::MetadataCommand) -> Result<(), Diags> {
    let super::args::MetadataCommand::Functions { json } = command;
    match json {
        true => print(Ok(crate::engine::function_signatures())),
        false => Err(Diag::new(
            "strata::cli::usage",
            "The metadata functions command requires the -json flag",
            "Run strata metadata functions -json: JSON is its only form, as in Terraform.",
        )
        .into()),
    }
}

/// The module calls of the working directory's configuration.
pub fn modules(json: bool, cx: &mut Context<'_>) -> Result<(), Diags> {
    print(crate::engine::modules(
        Path::new("."),
        json,
        &mut cx.sources,
    ))
}

/// strata's own release, the language it speaks, and the providers this
/// directory's lock file selects, as Terraform lists them.
pub fn version(json: bool) -> Result<(), Diags> {
    let selected = crate::engine::selected_providers(Path::new("."));
    printer::out(&described(json, &selected));
    Ok(())
}

/// `strata version`: strata's own release and the language it speaks.
fn described(json: bool, providers: &std::collections::BTreeMap<String, String>) -> String {
    let strata = env!("CARGO_PKG_VERSION");
    let language = crate::engine::TERRAFORM_LANGUAGE;
    if json {
        let doc = serde_json::json!({
            "strata_version": strata,
            "terraform_version": language,
            "provider_selections": providers,
            // Go's names for the architecture, as Terraform prints them.
            "platform": format!("{}_{}", std::env::consts::OS, match std::env::consts::ARCH {
                "x86_64" => "amd64",
                "aarch64" => "arm64",
                other => other,
            }),
        });
        format!("{doc:#}\n")
    } else {
        let listed: String = providers
            .iter()
            .map(|(source, v)| format!("+ provider {source} v{v}\n"))
            .collect();
        format!("strata v{strata}\nTerraform language v{language}\n{listed}")
    }
}
