//! The one-way rule of ARCHITECTURE.md, checked: each stage of `src/` and
//! of the language crate (`lang/src/`) may name (`crate::x`) only the
//! stages listed for it here (that the language names nothing of the
//! engine, the compiler holds: the crate cannot see it). A new edge fails
//! this test until it is added below with the reason it is needed — and
//! an edge against the pipeline's direction should not be added at all.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Stage → the stages it may use. Leaves (`diag`, `lang`, `limits`, `par`,
/// `runtime`, `timings`) are usable by all.
const ALLOWED: &[(&str, &[&str])] = &[
    ("syntax", &[]),
    ("eval", &["syntax", "funcs"]),
    // The functions that evaluate (templates, `decode_tfvars`) are handed
    // the evaluator in their call's context (`funcs::Evaluate`).
    ("funcs", &["syntax"]),
    ("config", &["syntax", "eval", "funcs"]),
    // The cluster spec is expanded from the loaded configuration (the
    // command calls it), evaluating its variables and locals; its placed
    // pools are decided by `placement`.
    ("cluster", &["syntax", "config", "placement"]),
    // Where a node pool's nodes go: pure decisions over candidates and
    // state's records, used by cluster, plan, render and engine.
    ("placement", &[]),
    // Sums the history drift runs keep; pure, like placement.
    ("report", &[]),
    // Module installation, before anything is loaded in full: it reads
    // source addresses, the CLI configuration and the manifest config
    // defines, and each installed module's calls (shallow).
    ("install", &["config"]),
    ("graph", &["syntax", "config"]),
    ("console", &["syntax", "eval"]),
    ("fmt", &["syntax"]),
    ("builtin", &["funcs"]),
    // Opens `terraform_remote_state`'s states for the builtin driver,
    // through the trait the driver declares.
    ("backends", &["config", "eval", "builtin"]),
    ("provision", &["config"]),
    (
        "walk",
        &["syntax", "eval", "config", "graph", "builtin", "provision"],
    ),
    // Asks each object's driver what it bills; the plan carries the result.
    ("cost", &["builtin"]),
    (
        "plan",
        &[
            "syntax",
            "eval",
            "funcs",
            "config",
            "graph",
            "builtin",
            "walk",
            "cost",
            "placement",
        ],
    ),
    (
        "apply",
        &[
            "eval",
            "config",
            "graph",
            "builtin",
            "walk",
            "plan",
            "provision",
        ],
    ),
    (
        "render",
        &[
            "syntax",
            "funcs",
            "plan",
            "cost",
            "placement",
            "comment",
            "report",
        ],
    ),
    ("comment", &[]),
    ("statecmd", &[]),
    // The engine runs every command, so it may use every stage below
    // it: the working directory's (`install`, `fmt`), the console's, and
    // `syntax` for `fmt` and for which provider serves a type (decided
    // from the arguments its blocks set, before anything is evaluated).
    (
        "engine",
        &[
            "syntax",
            "eval",
            "config",
            "funcs",
            "cluster",
            "placement",
            "install",
            "graph",
            "builtin",
            "backends",
            "walk",
            "plan",
            "cost",
            "apply",
            "render",
            "console",
            "fmt",
            "comment",
            "statecmd",
            "report",
        ],
    ),
    // The CLI is an adapter: clap's arguments into the engine's requests,
    // its values onto the terminal through the printer and render.
    ("cli", &["engine", "render"]),
    ("lib", &[]),
    ("main", &[]),
];

const LEAVES: &[&str] = &[
    "diag",
    "interrupt",
    "lang",
    "limits",
    "par",
    "runtime",
    "timings",
    "ui",
];

/// The stages `path` (a file, or a folder's files) names.
fn uses(path: &Path, out: &mut BTreeSet<String>) {
    if path.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path)
            .expect("read a stage folder")
            .map(|e| e.expect("a folder entry").path())
            .collect();
        entries.sort();
        for e in entries {
            uses(&e, out);
        }
        return;
    }
    if path.extension().is_none_or(|e| e != "rs") {
        return;
    }
    let text = std::fs::read_to_string(path).expect("read a source file");
    for (at, _) in text.match_indices("crate::") {
        let name: String = text[at + "crate::".len()..]
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || *c == '_')
            .collect();
        if !name.is_empty() {
            out.insert(name);
        }
    }
}

/// The stages of the engine (`src/`) and of the language crate
/// (`lang/src/`, which the engine re-exports under the same names), each
/// with the stages it names.
fn stages() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut stages: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for src in [root.join("src"), root.join("lang/src")] {
        for e in std::fs::read_dir(&src).expect("read a source folder") {
            let path = e.expect("an entry of a source folder").path();
            let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            let stem = stem.to_string();
            let mut used = BTreeSet::new();
            uses(&path, &mut used);
            used.remove(&stem);
            stages.entry(stem).or_default().extend(used);
        }
    }
    stages
}

#[test]
fn stages_use_only_what_comes_before_them() {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let stages = stages();
    assert!(
        stages.len() >= 20,
        "src/ should hold the stages: found {stages:?}"
    );
    let mut wrong = Vec::new();
    for (stage, used) in &stages {
        if LEAVES.contains(&stage.as_str()) {
            let beyond: Vec<_> = used
                .iter()
                .filter(|u| !LEAVES.contains(&u.as_str()))
                .collect();
            if !beyond.is_empty() {
                wrong.push(format!("{stage} is a leaf but uses {beyond:?}"));
            }
            continue;
        }
        let Some(may) = allowed.get(stage.as_str()) else {
            wrong.push(format!(
                "{stage} is a stage this test does not know: add it to ALLOWED"
            ));
            continue;
        };
        for u in used {
            if !LEAVES.contains(&u.as_str()) && !may.contains(&u.as_str()) {
                wrong.push(format!("{stage} uses {u}"));
            }
        }
        // The table says what is, not what once was.
        for m in may.iter().filter(|m| !used.contains(**m)) {
            wrong.push(format!("{stage} may use {m} but does not: drop it"));
        }
    }
    assert!(
        wrong.is_empty(),
        "edges against ARCHITECTURE.md: {wrong:#?}"
    );
}

#[test]
fn the_pipeline_runs_one_way_from_walk_to_render() {
    // The stages that were once tangled: none reaches back.
    let stages = stages();
    let forbidden = [
        ("walk", "plan"),
        ("walk", "apply"),
        ("plan", "apply"),
        ("plan", "render"),
        ("render", "builtin"),
        ("builtin", "backends"),
        ("builtin", "config"),
        ("render", "engine"),
        ("render", "apply"),
        ("comment", "engine"),
        ("config", "plan"),
        ("eval", "config"),
        ("funcs", "eval"),
        ("config", "cluster"),
        ("cost", "plan"),
        ("cost", "render"),
        ("placement", "cluster"),
        ("placement", "plan"),
        ("placement", "apply"),
    ];
    for (from, to) in forbidden {
        assert!(
            !stages[from].contains(to),
            "{from} must not use {to}: {:?}",
            stages[from]
        );
    }
}

#[test]
fn the_stages_form_no_cycle() {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    // Depth first; a stage met again while still on the path closes a cycle.
    fn visit<'a>(
        stage: &'a str,
        allowed: &BTreeMap<&'a str, &'a [&'a str]>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if done.contains(stage) {
            return;
        }
        assert!(
            !path.contains(&stage),
            "a cycle among the stages: {path:?} -> {stage}"
        );
        path.push(stage);
        for next in allowed.get(stage).copied().unwrap_or_default() {
            visit(next, allowed, path, done);
        }
        path.pop();
        done.insert(stage);
    }
    let mut done = BTreeSet::new();
    for stage in allowed.keys() {
        visit(stage, &allowed, &mut Vec::new(), &mut done);
    }
}

/// The files of one folder (a stage's, or a crate root's) that `file`
/// names: `super::x` for a stage's files, `crate::x` at a crate's root;
/// grouped imports (`super::{x, y}`) included.
fn siblings_named(text: &str, prefix: &str, siblings: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (at, _) in text.match_indices(prefix) {
        let rest = &text[at + prefix.len()..];
        let names: Vec<&str> = match rest.strip_prefix('{') {
            Some(group) => group
                .split('}')
                .next()
                .unwrap_or_default()
                .split(',')
                .map(|n| n.trim().split("::").next().unwrap_or_default())
                .collect(),
            None => vec![rest
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .next()
                .unwrap_or_default()],
        };
        out.extend(
            names
                .into_iter()
                .filter(|n| siblings.contains(*n))
                .map(str::to_string),
        );
    }
    out
}

/// Every pair of files in one folder that name each other: two files
/// that need each other are one job split badly (issue 41 opened four).
fn circles_in(dir: &Path, prefix: &str, found: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files = BTreeMap::new();
    let mut siblings = BTreeSet::new();
    for e in entries {
        let path = e.expect("an entry").path();
        let Some(stem) = path
            .file_stem()
            .and_then(|s| s.to_str())
            .map(str::to_string)
        else {
            continue;
        };
        if path.is_dir() {
            circles_in(&path, "super::", found);
            siblings.insert(stem);
        } else if path.extension().is_some_and(|e| e == "rs") {
            siblings.insert(stem.clone());
            if !["mod", "lib", "main"].contains(&stem.as_str()) {
                let text = std::fs::read_to_string(&path).expect("a source file");
                // What a comment mentions is no use.
                let code: Vec<&str> = text
                    .lines()
                    .filter(|l| !l.trim_start().starts_with("//"))
                    .collect();
                files.insert(stem, code.join("\n"));
            }
        }
    }
    let uses: BTreeMap<&String, BTreeSet<String>> = files
        .iter()
        .map(|(name, text)| {
            let mut named = siblings_named(text, prefix, &siblings);
            named.remove(name);
            (name, named)
        })
        .collect();
    for (a, named) in &uses {
        for b in named {
            if a.as_str() < b.as_str() && uses.get(b).is_some_and(|n| n.contains(*a)) {
                found.push(format!("{}: {a} <-> {b}", dir.display()));
            }
        }
    }
}

#[test]
fn no_two_files_of_a_folder_use_each_other() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for src in [
        "src",
        "lang/src",
        "state/src",
        "providers/core/src",
        "providers/plugin/src",
        "providers/rest/src",
        "providers/utility/src",
        "providers/aws/src",
        "providers/gcp/src",
        "providers/azure/src",
        "providers/kubernetes/src",
        "testing/standin/src",
        "testing/sandbox/src",
    ] {
        circles_in(&root.join(src), "crate::", &mut found);
    }
    // HCL's grammar is itself one circle: a template holds expressions
    // (`${...}`), and an expression holds templates (quoted strings).
    found.retain(|f| !f.ends_with("lang/src/syntax: native <-> template"));
    assert!(found.is_empty(), "files that use each other: {found:#?}");
}

/// The text with comments, strings and character literals blanked out
/// (newlines kept), so braces and `fn` are counted only where they are code.
fn code_only(text: &str) -> String {
    let c: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, ch: char| out.push(if ch == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < c.len() {
        if c[i] == '/' && at(&c, i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if c[i] == '/' && at(&c, i + 1) == '*' {
            while i < c.len() && !(c[i] == '*' && at(&c, i + 1) == '/') {
                blank(&mut out, c[i]);
                i += 1;
            }
            i += 2;
        } else if c[i] == 'r'
            && (at(&c, i + 1) == '"' || at(&c, i + 1) == '#')
            && !prev_is_ident(&c, i)
        {
            let hashes = (1..).take_while(|&k| at(&c, i + k) == '#').count();
            if at(&c, i + 1 + hashes) != '"' {
                out.push(c[i]);
                i += 1;
                continue;
            }
            i += 2 + hashes;
            let close: Vec<char> = std::iter::once('"')
                .chain("#".repeat(hashes).chars())
                .collect();
            while i < c.len() && !c[i..].starts_with(&close) {
                blank(&mut out, c[i]);
                i += 1;
            }
            i += close.len();
        } else if c[i] == '"' {
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    i += 1;
                }
                blank(&mut out, c.get(i).copied().unwrap_or(' '));
                i += 1;
            }
            i += 1;
        } else if c[i] == '\'' && (at(&c, i + 1) == '\\' || at(&c, i + 2) == '\'') {
            // A character literal; a lifetime (`'a`) has no closing quote.
            i += 1;
            while i < c.len() && c[i] != '\'' {
                i += if c[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
}

fn at(c: &[char], i: usize) -> char {
    c.get(i).copied().unwrap_or(' ')
}

fn prev_is_ident(c: &[char], i: usize) -> bool {
    i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_')
}

/// Each function's name and length in lines, from `fn` to its closing brace.
fn function_lengths(code: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut found = Vec::new();
    for (start, line) in lines.iter().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(at) = words.iter().position(|w| *w == "fn") else {
            continue;
        };
        let name: String = words
            .get(at + 1)
            .map(|w| {
                w.chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect()
            })
            .unwrap_or_default();
        let mut depth = 0i32;
        for (end, l) in lines.iter().enumerate().skip(start) {
            let opened_before = depth > 0;
            depth += l.matches('{').count() as i32 - l.matches('}').count() as i32;
            if !opened_before && depth == 0 && l.trim_end().ends_with(';') {
                break; // a declaration without a body
            }
            if depth <= 0 && (opened_before || l.contains('{')) {
                found.push((name.clone(), end - start + 1));
                break;
            }
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// Functions fit a screen: in the engine's crate none passes 100 lines,
/// and in the cluster expansion none passes 80 (issue 41's bounds); a long
/// one is taken apart by job rather than let grow.
#[test]
fn functions_fit_a_screen() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let mut long = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("a source file");
        let rel = f.strip_prefix(root).unwrap_or(f).display().to_string();
        let bound = if rel.starts_with("src/cluster/") {
            80
        } else {
            100
        };
        for (name, lines) in function_lengths(&code_only(&text)) {
            if lines > bound {
                long.push(format!("{rel}: {name} is {lines} lines (bound {bound})"));
            }
        }
    }
    assert!(files.len() > 100, "the scan found the sources");
    assert!(long.is_empty(), "functions to take apart: {long:#?}");
}

#[test]
fn the_length_scan_counts_code_not_text() {
    let text = "fn a() {\n    let s = \"}}}\";\n    let c = '{';\n    // }\n    x::<'a>();\n}\nfn b(x: u8);\nfn c() { r#\"{\"# }\n";
    let got = function_lengths(&code_only(text));
    assert_eq!(got, vec![("a".to_string(), 6), ("c".to_string(), 1)]);
}
