//! The plan as a pull-request comment: counts first, a warning when
//! anything is deleted or replaced, the resources per action, and the full
//! diff collapsed — kept under GitHub's 65 536-character limit by cutting
//! the diff, never the summary.

use crate::plan::{Action, Plan};

/// GitHub refuses comments longer than this many characters.
pub const LIMIT: usize = 65_536;

/// What a report's hidden line and `strata comment`'s link and marker take.
const FOOTER: usize = 512;

fn list(addrs: &[String]) -> String {
    addrs
        .iter()
        .map(|a| format!("`{a}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The summary: everything but the diff.
pub fn summary(p: &Plan) -> String {
    let n = p.counts();
    let mut out = String::new();
    if !p.has_changes() {
        out.push_str(
            "### strata plan: no changes\n\nThe infrastructure matches the configuration.\n",
        );
        if !p.cost.is_empty() {
            out.push('\n');
            out.push_str(&crate::render::cost::markdown(&p.cost));
        }
        out.push_str(&crate::render::placement::markdown(&p.placements));
        out.push_str(&crate::render::placement::dispatch_markdown(&p.dispatch));
        return out;
    }
    out.push_str(&format!(
        "### strata plan: {} to add, {} to change, {} to destroy\n\n",
        n.add, n.change, n.destroy
    ));
    for d in p.unplaced() {
        out.push_str(&format!(
            "> [!CAUTION]\n> Node pool `{}` wants {} node(s) and has no place with capacity: the configuration is not met.\n\n",
            d.pool, d.nodes
        ));
    }
    // The money and where the GPUs go before the resources.
    out.push_str(&crate::render::cost::markdown(&p.cost));
    out.push_str(&crate::render::placement::markdown(&p.placements));
    out.push_str(&crate::render::placement::dispatch_markdown(&p.dispatch));
    let of = |pred: &dyn Fn(Action) -> bool| -> Vec<String> {
        p.changes
            .iter()
            .filter(|c| pred(c.action))
            .map(|c| match &c.deposed {
                Some(d) => format!("{} (deposed {d})", c.addr),
                None => c.addr.to_string(),
            })
            .collect()
    };
    let deleted = of(&|a| a == Action::Delete);
    let replaced = of(&Action::is_replace);
    if !deleted.is_empty() || !replaced.is_empty() {
        out.push_str("> [!WARNING]\n> This plan ");
        let mut parts = Vec::new();
        if !deleted.is_empty() {
            parts.push(format!("**destroys {}**", deleted.len()));
        }
        if !replaced.is_empty() {
            parts.push(format!("**replaces {}**", replaced.len()));
        }
        out.push_str(&parts.join(" and "));
        out.push_str(" resource instances. Check them before merging.\n\n");
    }
    out.push_str("| action | resources |\n| --- | --- |\n");
    let rows: [(&str, Vec<String>); 5] = [
        ("➕ create", of(&|a| a == Action::Create)),
        ("🔄 update", of(&|a| a == Action::Update)),
        ("♻️ replace", replaced),
        ("🗑️ destroy", deleted),
        ("📖 read", of(&|a| a == Action::Read)),
    ];
    for (what, addrs) in rows {
        if !addrs.is_empty() {
            out.push_str(&format!("| {what} | {} |\n", list(&addrs)));
        }
    }
    let moved: Vec<String> = p
        .changes
        .iter()
        .filter_map(|c| Some(format!("{} → {}", c.previous_addr.as_ref()?, c.addr)))
        .collect();
    if !moved.is_empty() {
        out.push_str(&format!("| ➡️ move | {} |\n", list(&moved)));
    }
    let outputs: Vec<String> = p
        .outputs
        .iter()
        .filter(|o| o.action() != Action::NoOp)
        .map(|o| o.name.clone())
        .collect();
    if !outputs.is_empty() {
        out.push_str(&format!("| 📤 outputs | {} |\n", list(&outputs)));
    }
    out
}

pub fn plan(p: &Plan) -> String {
    let mut out = summary(p);
    if p.has_changes() {
        out = with_details(
            out,
            "Full plan",
            &crate::render::human::plan(p),
            "the plan is cut here to fit a comment; run `strata plan` for all of it",
        );
    }
    out.push_str(&crate::comment::plan_marker(label(p)));
    out
}

/// The pull request's label for this plan.
pub fn label(p: &Plan) -> &'static str {
    if !p.has_changes() {
        "strata:no-changes"
    } else if p.counts().destroy > 0 {
        "strata:destroy"
    } else {
        "strata:changes"
    }
}

/// `summary` followed by `text` collapsed under `title`, as a diff, cut
/// (saying `cut`) to keep the whole under [`LIMIT`]; the summary is never cut.
pub fn with_details(mut out: String, title: &str, text: &str, cut: &str) -> String {
    let open = format!("\n<details><summary>{title}</summary>\n\n```diff\n");
    let close = "```\n\n</details>\n";
    let note = format!("\n… ({cut})\n");
    // Lines start with the action symbol; `diff` colours +/- at line start.
    let body: String = text
        .lines()
        .map(|l| {
            let t = l.trim_start();
            if t.starts_with(['+', '-', '~']) {
                let indent = l.len() - t.len();
                format!(
                    "{}{}\n",
                    &t[..1],
                    &format!("{}{}", " ".repeat(indent), &t[1..])
                )
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    // Room is kept for the hidden line and the footer `strata comment` adds.
    let room =
        LIMIT.saturating_sub(out.chars().count() + open.len() + close.len() + note.len() + FOOTER);
    out.push_str(&open);
    if body.chars().count() <= room {
        out.push_str(&body);
    } else {
        let mut used = 0;
        for line in body.split_inclusive('\n') {
            let n = line.chars().count();
            if used + n > room {
                break;
            }
            out.push_str(line);
            used += n;
        }
        out.push_str(&note);
    }
    out.push_str(close);
    out
}
