//! A test file (`*.tftest.hcl`) as Terraform's `test` command reads it:
//! file-wide `variables`, then `run` blocks executed in order, each
//! planning or applying the configuration under test (or a module named
//! by its `module` block) and judging its `assert` blocks, or expecting
//! the checks `expect_failures` names to fail; `mock_provider` blocks
//! stand in for providers and `override_resource`, `override_data` and
//! `override_module` blocks for single objects and module calls;
//! `provider` blocks configure the providers of the runs, and a run's
//! `providers` chooses among those and the aliased mocks. What strata does
//! not run yet is an error at its place, never skipped: a test that did
//! not run must not pass.

use super::decode::{
    condition, const_bool, const_string, err, expr_list, labels, provider, providers_map,
    unsupported_attr, unsupported_block,
};
use super::{Condition, Provider, ProviderRef};
use crate::diag::{Diags, Span};
use crate::syntax::{Attribute, Block, Body, Expr, ExprKind};

/// One test file.
#[derive(Debug, Clone, Default)]
pub struct TestFile {
    /// `variables { … }` at the top: every run's, unless a run says
    /// otherwise.
    pub variables: Vec<Attribute>,
    pub runs: Vec<RunBlock>,
    pub mocks: Vec<MockProvider>,
    /// File-wide `override_*` blocks: every run's, under its own.
    pub overrides: Vec<Override>,
    /// `provider` blocks: configurations over the configuration's own of
    /// the same name and alias, in every run (or, in a run with
    /// `providers`, those it names).
    pub providers: Vec<Provider>,
    /// `test { parallel = true }` (Terraform 1.12): the file's runs may
    /// run side by side. strata runs them in order, which gives the
    /// verdicts parallel runs must give.
    pub parallel: bool,
}

/// What an `override_*` block stands in for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverrideKind {
    Resource,
    Data,
    /// `override_ephemeral` (Terraform's mock ephemeral resources,
    /// hashicorp/terraform#38928).
    Ephemeral,
    Module,
}

impl OverrideKind {
    fn of(block: &str) -> Option<OverrideKind> {
        match block {
            "override_resource" => Some(OverrideKind::Resource),
            "override_data" => Some(OverrideKind::Data),
            "override_ephemeral" => Some(OverrideKind::Ephemeral),
            "override_module" => Some(OverrideKind::Module),
            _ => None,
        }
    }

    /// What the block's target must be, in Terraform's words.
    fn targets(self) -> &'static str {
        match self {
            OverrideKind::Resource => "resources",
            OverrideKind::Data => "data sources",
            OverrideKind::Ephemeral => "ephemeral resources",
            OverrideKind::Module => "modules",
        }
    }
}

/// When a mock's or an override's values are given: at apply (computed
/// attributes unknown in the plan, Terraform's default) or already in the
/// plan (`override_during = plan`, Terraform 1.11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum During {
    #[default]
    Apply,
    Plan,
}

/// `override_resource`, `override_data` or `override_module { target,
/// values | outputs, override_during }`.
#[derive(Debug, Clone)]
pub struct Override {
    pub kind: OverrideKind,
    /// The target as an address, `module.child.aws_s3_bucket.b[0]`.
    pub target: String,
    /// Whether the target names one instance (`…[0]`) rather than every
    /// instance of a resource.
    pub instance: bool,
    pub target_span: Span,
    /// `values` (a module's `outputs`); none: an empty object.
    pub values: Option<Expr>,
    /// `None`: the enclosing mock's, else at apply.
    pub during: Option<During>,
}

/// `mock_provider "NAME" { mock_resource "T" { defaults = {…} } … }`.
#[derive(Debug, Clone)]
pub struct MockProvider {
    pub name: String,
    /// `alias`: a mock a run chooses with `providers = { NAME = NAME.ALIAS }`;
    /// without, the provider is mocked in every run.
    pub alias: Option<String>,
    /// `source`: a directory (from the configuration under test's) whose
    /// `*.tfmock.hcl` files hold more of the same blocks, under the
    /// block's own.
    pub source: Option<(String, Span)>,
    pub span: Span,
    /// `mock_resource` blocks: each type's `defaults` (none: `{}`).
    pub resources: Vec<(String, Option<Expr>)>,
    /// `mock_data` blocks.
    pub data: Vec<(String, Option<Expr>)>,
    /// `mock_ephemeral` blocks.
    pub ephemeral: Vec<(String, Option<Expr>)>,
    /// Its `override_resource` and `override_data` blocks: for this
    /// provider's objects only.
    pub overrides: Vec<Override>,
    /// `override_during`: when its values are given.
    pub during: During,
}

/// Whether a run plans or applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Plan,
    Apply,
}

/// `plan_options { … }`.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    pub refresh_only: bool,
    /// `refresh = false`.
    pub no_refresh: bool,
    pub replace: Vec<Expr>,
    pub target: Vec<Expr>,
}

/// A `module { source, version }` block: what the run plans in place of
/// the configuration under test.
#[derive(Debug, Clone)]
pub struct RunModule {
    pub source: String,
    pub version: Option<super::ModuleVersion>,
    pub span: Span,
}

/// Where `init` installs run `run`'s `module` of test file `file` (its
/// path from the configuration): the module manifest's key, Terraform's
/// `test.<directory parts>.<file less .tftest.hcl>.<run>` (`tests/main.tftest.hcl`,
/// run `setup`: `test.tests.main.setup`; a JSON file's name is kept
/// whole, as Terraform keeps it).
pub fn module_key(file: &std::path::Path, run: &str) -> String {
    let mut parts = vec!["test".to_string()];
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) {
        parts.extend(dir.iter().map(|p| p.to_string_lossy().into_owned()));
    }
    let base = file.file_name().unwrap_or_default().to_string_lossy();
    parts.push(
        base.strip_suffix(".tftest.hcl")
            .unwrap_or(&base)
            .to_string(),
    );
    parts.push(run.to_string());
    parts.join(".")
}

/// One `run "NAME" { … }` block.
#[derive(Debug, Clone)]
pub struct RunBlock {
    pub name: String,
    pub span: Span,
    pub command: Command,
    pub variables: Vec<Attribute>,
    pub asserts: Vec<Condition>,
    /// References to the checkable objects whose failure is expected.
    pub expect_failures: Vec<Expr>,
    pub module: Option<RunModule>,
    pub plan_options: PlanOptions,
    /// The run's own `override_*` blocks, over the file's.
    pub overrides: Vec<Override>,
    /// `providers = { aws = aws.fake }`: the configuration under test's
    /// provider (the key) served by the file's `provider` or
    /// `mock_provider` block (the value).
    pub providers: Vec<(ProviderRef, ProviderRef)>,
}

/// Decodes a parsed test file.
pub fn decode_test_file(body: Body) -> Result<TestFile, Diags> {
    let mut diags = Diags::default();
    let mut file = TestFile::default();
    let mut test_seen = false;
    for a in &body.attrs {
        diags.push(unsupported_attr(a, "test file", &[]));
    }
    for b in body.blocks {
        match b.kind.as_str() {
            "variables" => {
                let _ = labels(&b, &[], &mut diags);
                file.variables.extend(b.body.attrs);
            }
            "run" => {
                if let Some(r) = run(b, &mut diags) {
                    if file.runs.iter().any(|o| o.name == r.name) {
                        diags.push(err(
                            "strata::test::run",
                            "Duplicate \"run\" block names",
                            format!("This test file already has a run block named {}.", r.name),
                            r.span,
                        ));
                    }
                    file.runs.push(r);
                }
            }
            "provider" => {
                if let Some(l) = labels(&b, &["name"], &mut diags) {
                    file.providers.push(provider(&b, l[0].clone(), &mut diags));
                }
            }
            "mock_provider" => file.mocks.extend(mock_provider(&b, &mut diags)),
            "test" => test_block(&b, (&mut file, &mut test_seen), &mut diags),
            kind if OverrideKind::of(kind).is_some() => {
                file.overrides.extend(override_block(&b, &mut diags))
            }
            _ => diags.push(unsupported_block(&b, "a test file", &["run", "variables"])),
        }
    }
    diags.into_result(file)
}

/// The file's `test { parallel }` block, once.
fn test_block(b: &Block, (file, seen): (&mut TestFile, &mut bool), diags: &mut Diags) {
    let _ = labels(b, &[], diags);
    if std::mem::replace(seen, true) {
        diags.push(err(
            "strata::test::file",
            "Multiple \"test\" blocks",
            "This test file already has a \"test\" block.",
            b.kind_span,
        ));
    }
    for a in &b.body.attrs {
        match a.name.as_str() {
            "parallel" => file.parallel = super::decode::const_bool(a, diags),
            "skip_cleanup" => diags.push(err(
                "strata::test::file",
                "Invalid attribute",
                "The skip_cleanup attribute is only available in experimental builds of Terraform.",
                a.name_span,
            )),
            _ => diags.push(unsupported_attr(a, "test", &["parallel"])),
        }
    }
    for nb in &b.body.blocks {
        diags.push(unsupported_block(nb, "a test block", &[]));
    }
}

fn mock_provider(b: &Block, diags: &mut Diags) -> Option<MockProvider> {
    let name = labels(b, &["name"], diags)?.into_iter().next()?;
    let mut mock = MockProvider {
        name,
        span: b.kind_span,
        alias: None,
        source: None,
        resources: Vec::new(),
        data: Vec::new(),
        ephemeral: Vec::new(),
        overrides: Vec::new(),
        during: During::Apply,
    };
    for a in &b.body.attrs {
        match a.name.as_str() {
            "alias" => mock.alias = const_string(a, diags),
            "source" => mock.source = const_string(a, diags).map(|s| (s, a.expr.span)),
            "override_during" => mock.during = during(a, diags).unwrap_or_default(),
            _ => diags.push(unsupported_attr(
                a,
                "mock_provider",
                &["alias", "source", "override_during"],
            )),
        }
    }
    mock_blocks(&b.body.blocks, &mut mock, "a mock_provider block", diags);
    Some(mock)
}

/// A mock data file (`*.tfmock.hcl`, Terraform 1.8) of `mock`'s `source`:
/// its blocks go under the mock's own — a `mock_resource` of the block
/// wins over the file's for the same type, an override of the block is
/// found first.
pub fn decode_mock_file(body: Body, mock: &mut MockProvider) -> Result<(), Diags> {
    let mut diags = Diags::default();
    for a in &body.attrs {
        diags.push(unsupported_attr(a, "mock data file", &[]));
    }
    let mut file = MockProvider {
        resources: Vec::new(),
        data: Vec::new(),
        ephemeral: Vec::new(),
        overrides: Vec::new(),
        ..mock.clone()
    };
    mock_blocks(&body.blocks, &mut file, "a mock data file", &mut diags);
    file.resources.append(&mut mock.resources);
    file.data.append(&mut mock.data);
    file.ephemeral.append(&mut mock.ephemeral);
    mock.resources = file.resources;
    mock.data = file.data;
    mock.ephemeral = file.ephemeral;
    mock.overrides.append(&mut file.overrides);
    diags.into_result(())
}

/// The `mock_resource`, `mock_data` and `override_*` blocks of a mock
/// (in `parent`: its block or a mock data file) into `mock`.
fn mock_blocks(blocks: &[Block], mock: &mut MockProvider, parent: &str, diags: &mut Diags) {
    for nb in blocks {
        let into = match nb.kind.as_str() {
            "mock_resource" => &mut mock.resources,
            "mock_data" => &mut mock.data,
            "mock_ephemeral" => &mut mock.ephemeral,
            "override_resource" | "override_data" | "override_ephemeral" => {
                mock.overrides.extend(override_block(nb, diags));
                continue;
            }
            _ => {
                let allowed = [
                    "mock_resource",
                    "mock_data",
                    "mock_ephemeral",
                    "override_resource",
                    "override_data",
                    "override_ephemeral",
                ];
                diags.push(unsupported_block(nb, parent, &allowed));
                continue;
            }
        };
        let Some(type_name) = labels(nb, &["type"], diags).and_then(|l| l.into_iter().next())
        else {
            continue;
        };
        for a in &nb.body.attrs {
            match a.name.as_str() {
                "defaults" => {}
                // Accepted as Terraform accepts it; a mock's values are
                // given when the mock says.
                "override_during" => {
                    let _ = during(a, diags);
                }
                _ => diags.push(unsupported_attr(
                    a,
                    &nb.kind,
                    &["defaults", "override_during"],
                )),
            }
        }
        into.push((type_name, nb.body.attr("defaults").map(|a| a.expr.clone())));
    }
}

/// `override_during = plan | apply`, a bare keyword.
fn during(a: &Attribute, diags: &mut Diags) -> Option<During> {
    match keyword(&a.expr).as_deref() {
        Some("plan") => Some(During::Plan),
        Some("apply") => Some(During::Apply),
        _ => {
            diags.push(err(
                "strata::test::override_during",
                "Invalid override_during value",
                "The override_during attribute must be a value of plan or apply.",
                a.expr.span,
            ));
            None
        }
    }
}

/// An `override_resource`, `override_data` or `override_module` block.
fn override_block(b: &Block, diags: &mut Diags) -> Option<Override> {
    let kind = OverrideKind::of(&b.kind)?;
    let _ = labels(b, &[], diags);
    let values_name = match kind {
        OverrideKind::Module => "outputs",
        _ => "values",
    };
    let mut values = None;
    let mut during_ = None;
    for a in &b.body.attrs {
        match a.name.as_str() {
            "target" => {}
            "override_during" => during_ = during(a, diags),
            n if n == values_name => values = Some(a.expr.clone()),
            _ => diags.push(unsupported_attr(
                a,
                &b.kind,
                &["target", values_name, "override_during"],
            )),
        }
    }
    for nb in &b.body.blocks {
        diags.push(unsupported_block(nb, &format!("an {} block", b.kind), &[]));
    }
    let Some(target) = b.body.attr("target") else {
        diags.push(err(
            "strata::test::override_target",
            "Missing target attribute",
            format!("{} blocks must specify a target address.", b.kind),
            b.kind_span,
        ));
        return None;
    };
    let e = &target.expr;
    let (Some(text), Some((names, indexed))) = (e.address_text(), e.address_names()) else {
        diags.push(err(
            "strata::test::override_target",
            "Invalid expression",
            "A single static variable reference is required: only attribute access and indexing with constant keys. No calculations, function calls, template expressions, etc are allowed here.",
            e.span,
        ));
        return None;
    };
    if target_kind(&names) != Some(kind) {
        diags.push(err(
            "strata::test::override_target",
            "Invalid override target",
            format!(
                "You can only target {} from {} blocks, not {text}.",
                kind.targets(),
                b.kind
            ),
            e.span,
        ));
        return None;
    }
    Some(Override {
        kind,
        target: text,
        instance: indexed && kind != OverrideKind::Module,
        target_span: e.span,
        values,
        during: during_,
    })
}

/// What a reference's names (keys left out) address: `module.a.module.b`
/// a module, `module.a.data.t.n` a data source, `t.n` a resource.
fn target_kind(names: &[&str]) -> Option<OverrideKind> {
    let mut rest = names;
    let mut in_module = false;
    while let ["module", _, tail @ ..] = rest {
        rest = tail;
        in_module = true;
    }
    match rest {
        [] if in_module => Some(OverrideKind::Module),
        ["data", _, _] => Some(OverrideKind::Data),
        ["ephemeral", _, _] => Some(OverrideKind::Ephemeral),
        [t, _] if !matches!(*t, "data" | "ephemeral" | "module") => Some(OverrideKind::Resource),
        _ => None,
    }
}

const RUN_ATTRS: &[&str] = &["command", "expect_failures", "providers", "parallel"];
const RUN_BLOCKS: &[&str] = &[
    "variables",
    "assert",
    "module",
    "plan_options",
    "override_resource",
    "override_data",
    "override_ephemeral",
    "override_module",
];

fn run(b: Block, diags: &mut Diags) -> Option<RunBlock> {
    let name = labels(&b, &["name"], diags)?.into_iter().next()?;
    let mut run = RunBlock {
        name,
        span: b.kind_span,
        command: Command::Apply,
        variables: Vec::new(),
        asserts: Vec::new(),
        expect_failures: Vec::new(),
        module: None,
        plan_options: PlanOptions::default(),
        overrides: Vec::new(),
        providers: Vec::new(),
    };
    for a in &b.body.attrs {
        match a.name.as_str() {
            "command" => run.command = command(a, diags)?,
            "expect_failures" => run.expect_failures = expr_list(a, diags),
            "providers" => run.providers = providers_map(&a.expr, diags),
            // Terraform 1.12: a run that may run beside others; strata
            // runs in order, which gives the same verdicts.
            "parallel" => {
                let _ = super::decode::const_bool(a, diags);
            }
            _ => diags.push(unsupported_attr(a, "run", RUN_ATTRS)),
        }
    }
    for nb in b.body.blocks {
        match nb.kind.as_str() {
            "variables" => run.variables.extend(nb.body.attrs),
            "assert" => run.asserts.extend(condition(&nb, diags)),
            "module" => run.module = run_module(&nb, diags),
            "plan_options" => run.plan_options = plan_options(&nb, diags),
            kind if OverrideKind::of(kind).is_some() => {
                run.overrides.extend(override_block(&nb, diags))
            }
            _ => diags.push(unsupported_block(&nb, "a run block", RUN_BLOCKS)),
        }
    }
    Some(run)
}

/// `command = plan` or `apply`, a bare keyword.
fn command(a: &Attribute, diags: &mut Diags) -> Option<Command> {
    match keyword(&a.expr).as_deref() {
        Some("plan") => Some(Command::Plan),
        Some("apply") => Some(Command::Apply),
        _ => {
            diags.push(err(
                "strata::test::command",
                "Invalid \"command\" keyword",
                "The \"command\" argument requires one of the following keywords without quotes: apply or plan.",
                a.expr.span,
            ));
            None
        }
    }
}

fn keyword(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Variable(n) => Some(n.clone()),
        _ => None,
    }
}

fn run_module(b: &Block, diags: &mut Diags) -> Option<RunModule> {
    let mut module = RunModule {
        source: String::new(),
        version: None,
        span: b.kind_span,
    };
    for a in &b.body.attrs {
        match a.name.as_str() {
            "source" => module.source = const_string(a, diags)?,
            "version" => {
                module.version = const_string(a, diags).map(|constraint| super::ModuleVersion {
                    constraint,
                    span: a.expr.span,
                })
            }
            _ => diags.push(unsupported_attr(a, "module", &["source", "version"])),
        }
    }
    if module.source.is_empty() {
        diags.push(err(
            "strata::test::module",
            "Missing required argument",
            "A run's module block needs \"source\", a string.",
            b.kind_span,
        ));
        return None;
    }
    Some(module)
}

fn plan_options(b: &Block, diags: &mut Diags) -> PlanOptions {
    let mut o = PlanOptions::default();
    for a in &b.body.attrs {
        match a.name.as_str() {
            "mode" => match keyword(&a.expr).as_deref() {
                Some("refresh-only") => o.refresh_only = true,
                Some("normal") => {}
                _ => diags.push(err(
                    "strata::test::mode",
                    "Invalid \"mode\" keyword",
                    "The \"mode\" argument requires one of the following keywords without quotes: normal or refresh-only.",
                    a.expr.span,
                )),
            },
            "refresh" => o.no_refresh = !const_bool(a, diags),
            "replace" => o.replace = expr_list(a, diags),
            "target" => o.target = expr_list(a, diags),
            _ => diags.push(unsupported_attr(
                a,
                "plan_options",
                &["mode", "refresh", "replace", "target"],
            )),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::module_key;
    use std::path::Path;

    /// Terraform's keys (`configs.buildTestModules`), which its init and
    /// strata's must agree on for one to use what the other installed.
    #[test]
    fn a_run_modules_key_is_terraforms() {
        let key = |file: &str, run: &str| module_key(Path::new(file), run);
        assert_eq!(key("main.tftest.hcl", "setup"), "test.main.setup");
        assert_eq!(
            key("tests/main.tftest.hcl", "setup"),
            "test.tests.main.setup"
        );
        assert_eq!(key("a/b/x.tftest.hcl", "r"), "test.a.b.x.r");
        assert_eq!(
            key("tests/x.tftest.json", "r"),
            "test.tests.x.tftest.json.r"
        );
    }
}
