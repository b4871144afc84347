//! Filesystem functions. Relative paths resolve from the evaluator's base
//! directory: the working directory for configuration, as in Terraform
//! (a module names its own files through `path.module`).

use super::{def, p, str_arg, CallCtx, FnError, FuncDef};
use crate::lang::types::Type;
use crate::lang::value::Value;
use base64::Engine as _;
use std::path::{Path, PathBuf};

fn resolve(ctx: &CallCtx, path: &str) -> PathBuf {
    let expanded = expand_home(path);
    let p = Path::new(&expanded);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        ctx.base_dir.join(p)
    }
}

fn expand_home(path: &str) -> String {
    match (path.strip_prefix('~'), std::env::var("HOME")) {
        (Some(rest), Ok(home)) if rest.is_empty() || rest.starts_with('/') => {
            format!("{home}{rest}")
        }
        _ => path.to_string(),
    }
}

pub(super) fn read(ctx: &CallCtx, path: &str) -> Result<Vec<u8>, FnError> {
    let full = resolve(ctx, path);
    std::fs::read(&full).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            FnError::arg(0, format!("no file exists at {path:?}; this function works only with files that are distributed as part of the configuration source code, so if this file will be created by a resource in this configuration you must instead obtain this result from an attribute of that resource"))
        } else {
            FnError::arg(0, format!("failed to read {path:?}: {e}"))
        }
    })
}

pub(super) fn read_text(ctx: &CallCtx, path: &str) -> Result<String, FnError> {
    String::from_utf8(read(ctx, path)?)
        .map_err(|_| FnError::arg(0, format!("contents of {path:?} are not valid UTF-8; use the filebase64 function to obtain the Base64 encoded contents or the other file functions (e.g. filemd5, filesha256) to obtain file hashing results instead")))
}

/// Go's `filepath.Clean`, which Terraform's path functions apply.
fn clean(path: &str) -> String {
    if path.is_empty() {
        return ".".into();
    }
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

pub fn register(defs: &mut Vec<FuncDef>) {
    let st = || Type::String;
    defs.push(def("file", vec![p("path", st())], st(), |ctx, a| {
        read_text(ctx, str_arg(a, 0)).map(Value::String)
    }));
    defs.push(def("filebase64", vec![p("path", st())], st(), |ctx, a| {
        Ok(Value::String(
            base64::engine::general_purpose::STANDARD.encode(read(ctx, str_arg(a, 0))?),
        ))
    }));
    defs.push(def(
        "fileexists",
        vec![p("path", st())],
        Type::Bool,
        |ctx, a| {
            let full = resolve(ctx, str_arg(a, 0));
            match std::fs::metadata(&full) {
                Ok(m) if m.is_file() => Ok(Value::Bool(true)),
                Ok(_) => Err(FnError::call(format!(
                    "{:?} is not a regular file, but {:?}",
                    str_arg(a, 0),
                    "directory"
                ))),
                Err(_) => Ok(Value::Bool(false)),
            }
        },
    ));
    defs.push(def(
        "fileset",
        vec![p("path", st()), p("pattern", st())],
        Type::set(st()),
        |ctx, a| {
            let base = resolve(ctx, str_arg(a, 0));
            let base = std::fs::canonicalize(&base).unwrap_or(base);
            let pattern = format!(
                "{}/{}",
                glob::Pattern::escape(&base.to_string_lossy()),
                str_arg(a, 1)
            );
            let paths = glob::glob(&pattern).map_err(|e| {
                FnError::arg(
                    1,
                    format!("failed to glob pattern {:?}: {e}", str_arg(a, 1)),
                )
            })?;
            let mut out = Vec::new();
            for entry in paths.flatten() {
                if !entry.is_file() {
                    continue;
                }
                if let Ok(rel) = entry.strip_prefix(&base) {
                    out.push(Value::String(rel.to_string_lossy().into_owned()));
                }
            }
            Ok(Value::new_set(Type::String, out))
        },
    ));
    defs.push(def("abspath", vec![p("path", st())], st(), |_, a| {
        let path = str_arg(a, 0);
        let abs = if Path::new(path).is_absolute() {
            path.to_string()
        } else {
            let cwd = std::env::current_dir().map_err(|e| FnError::call(e.to_string()))?;
            format!("{}/{path}", cwd.display())
        };
        Ok(Value::String(clean(&abs)))
    }));
    defs.push(def("basename", vec![p("path", st())], st(), |_, a| {
        let path = str_arg(a, 0);
        let trimmed = path.trim_end_matches('/');
        Ok(Value::String(if path.is_empty() {
            ".".into()
        } else if trimmed.is_empty() {
            "/".into()
        } else {
            trimmed.rsplit('/').next().unwrap_or(trimmed).to_string()
        }))
    }));
    defs.push(def("dirname", vec![p("path", st())], st(), |_, a| {
        let path = str_arg(a, 0);
        let dir = match path.rfind('/') {
            Some(i) => &path[..=i],
            None => "",
        };
        Ok(Value::String(clean(dir)))
    }));
    defs.push(def("pathexpand", vec![p("path", st())], st(), |_, a| {
        Ok(Value::String(expand_home(str_arg(a, 0))))
    }));
    defs.push(def(
        "templatefile",
        vec![p("path", st()), p("vars", Type::Dynamic)],
        st(),
        |ctx, a| {
            let text = read_text(ctx, str_arg(a, 0))?;
            let vars = a[1]
                .entries()
                .cloned()
                .ok_or_else(|| FnError::arg(1, "vars must be an object or map"))?;
            ctx.eval
                .template(&text, &vars, ctx.base_dir)
                .map_err(|d| FnError::call(format!("{}: {}", str_arg(a, 0), d.one_line())))
        },
    ));
    defs.push(def(
        "templatestring",
        vec![p("template", st()), p("vars", Type::Dynamic)],
        st(),
        |ctx, a| {
            let vars = a[1]
                .entries()
                .cloned()
                .ok_or_else(|| FnError::arg(1, "vars must be an object or map"))?;
            ctx.eval
                .template(str_arg(a, 0), &vars, ctx.base_dir)
                .map_err(|d| FnError::call(d.one_line()))
        },
    ));
}
