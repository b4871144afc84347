//! A large state's resources parsed on every core. Terraform and strata
//! both write a state indented by two spaces, and a JSON string cannot
//! hold a raw newline, so a line break followed by indentation is always
//! structure: `\n  "resources": [` opens the top-level array, the first
//! `\n  ]` after it closes it, and `\n    },\n    {` lies between two of
//! its elements. Each element is then parsed by serde on its own.
//!
//! Nothing here decides what a state means. A document laid out any other
//! way, or a piece that does not parse as a whole resource (which a split
//! in the wrong place could never do: its brackets would not balance),
//! sends the caller back to the one-pass parse, whose error names the line.

use crate::model::{ResourceState, State};
use std::ops::Range;

/// Below this a state is parsed in one pass: threads cost more than they
/// save.
const LEAST: usize = 1 << 20;

const OPEN: &str = "\n  \"resources\": [";
const CLOSE: &str = "\n  ]";
const BETWEEN: &str = "\n    },\n    {";

/// `text` parsed with its resources spread over `threads` threads; `None`
/// when it is small, not laid out as above, or does not parse so.
pub(crate) fn parse(text: &str, threads: usize) -> Option<State> {
    if text.len() < LEAST || threads < 2 {
        return None;
    }
    let (array, elements) = spans(text)?;
    let mut head = String::with_capacity(text.len() - array.len() + 2);
    head.push_str(&text[..array.start]);
    head.push_str("[]");
    head.push_str(&text[array.end..]);
    let mut state: State = serde_json::from_str(&head).ok()?;
    state.resources = resources(text, &elements, threads)?;
    Some(state)
}

/// The top-level `resources` array (its brackets included) and each of
/// its elements (braces included).
fn spans(text: &str) -> Option<(Range<usize>, Vec<Range<usize>>)> {
    let open = memchr::memmem::find(text.as_bytes(), OPEN.as_bytes())? + OPEN.len() - 1;
    let close = open + memchr::memmem::find(&text.as_bytes()[open..], CLOSE.as_bytes())?;
    let end = close + CLOSE.len();
    let inside = &text[open + 1..close];
    let first = open + 1 + inside.find('{')?;
    let mut elements = Vec::new();
    let mut start = first;
    for at in memchr::memmem::find_iter(&text.as_bytes()[first..close], BETWEEN.as_bytes()) {
        let brace = first + at + BETWEEN.len() - 1;
        // The element ends with the `}` the separator begins with.
        let closing = first + at + "\n    }".len();
        elements.push(start..closing);
        start = brace;
    }
    let last = text[..close].rfind('}')? + 1;
    (last > start).then_some(())?;
    elements.push(start..last);
    Some((open..end, elements))
}

/// The elements parsed as resources, in order, on up to `threads`
/// threads.
fn resources(text: &str, elements: &[Range<usize>], threads: usize) -> Option<Vec<ResourceState>> {
    let one = |span: &Range<usize>| serde_json::from_str::<ResourceState>(&text[span.clone()]).ok();
    let part = |spans: &[Range<usize>]| spans.iter().map(one).collect::<Option<Vec<_>>>();
    let chunk = elements.len().div_ceil(threads).max(1);
    let parts: Vec<Option<Vec<ResourceState>>> = std::thread::scope(|s| {
        let handles: Vec<_> = elements
            .chunks(chunk)
            .map(|spans| s.spawn(move || part(spans)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().ok().flatten())
            .collect()
    });
    let mut all = Vec::with_capacity(elements.len());
    for p in parts {
        all.extend(p?);
    }
    Some(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state_text(resources: usize) -> String {
        let resource = |i: usize| {
            format!(
                r#"    {{
      "mode": "managed",
      "type": "terraform_data",
      "name": "r{i}",
      "provider": "provider[\"terraform.io/builtin/terraform\"]",
      "instances": [
        {{
          "schema_version": 0,
          "attributes": {{"id": "{i}", "input": "a\n    }},\n    {{ ]"}}
        }},
        {{
          "index_key": 1,
          "schema_version": 0,
          "attributes": {{"id": "{i}-1"}}
        }}
      ]
    }}"#
            )
        };
        let body: Vec<String> = (0..resources).map(resource).collect();
        format!(
            "{{\n  \"version\": 4,\n  \"serial\": 3,\n  \"lineage\": \"l\",\n  \"outputs\": {{\n    \"o\": {{\n      \"value\": [1],\n      \"type\": [\"tuple\", [\"number\"]]\n    }}\n  }},\n  \"resources\": [\n{}\n  ],\n  \"check_results\": [\n    {{\n      \"x\": 1\n    }},\n    {{\n      \"y\": 2\n    }}\n  ]\n}}\n",
            body.join(",\n")
        )
    }

    #[test]
    fn resources_split_and_parsed_apart_are_the_one_pass_parse() {
        for n in [1, 2, 3, 50] {
            let text = state_text(n);
            let (_, elements) = spans(&text).expect("laid out as written");
            assert_eq!(elements.len(), n);
            let one_pass: State = serde_json::from_str(&text).expect("one pass");
            let mut split: State = serde_json::from_str(&{
                let (array, _) = spans(&text).expect("spans");
                format!("{}[]{}", &text[..array.start], &text[array.end..])
            })
            .expect("head");
            split.resources = resources(&text, &elements, 2).expect("parts");
            assert_eq!(split, one_pass, "{n} resources");
        }
    }

    #[test]
    fn a_document_laid_out_otherwise_goes_back_to_the_one_pass_parse() {
        let text = state_text(3);
        let minified: serde_json::Value = serde_json::from_str(&text).expect("json");
        assert!(spans(&minified.to_string()).is_none());
        let tabs = text.replace("  ", "\t");
        assert!(spans(&tabs).is_none());
        // A boundary that is not between two resources: a piece does not
        // parse, and nothing is returned.
        let wrong = text.replacen("\n        },\n        {", "\n    },\n    {", 1);
        let (_, elements) = spans(&wrong).expect("spans");
        assert!(resources(&wrong, &elements, 2).is_none());
    }
}
