//! `random_string` and `random_password`: one generator, the password's
//! result sensitive and kept with a bcrypt hash beside it.

use super::keepers;
use crate::common::{boolean, computed_string, failed, invalid, number, string, with};
use crate::provider::{DataSource, Planning, Resource};
use async_trait::async_trait;
use rand::seq::SliceRandom;
use rand::Rng;
use strata_provider::{AttributeSchema, DriverError, Problem, ResourceSchema};
use strata_value::types::Type;
use strata_value::value::Value;

const LOWER: &str = "abcdefghijklmnopqrstuvwxyz";
const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const NUMERIC: &str = "0123456789";
const SPECIAL: &str = "!@#$%&*()-_=+[]{}<>:?";
const MINIMUMS: [&str; 4] = ["min_upper", "min_lower", "min_numeric", "min_special"];

pub(crate) struct RandomString {
    /// `random_password`: a sensitive result, a bcrypt hash, id "none".
    password: bool,
}

impl RandomString {
    pub(crate) fn string() -> RandomString {
        RandomString { password: false }
    }

    pub(crate) fn password() -> RandomString {
        RandomString { password: true }
    }

    fn type_name(&self) -> &'static str {
        if self.password {
            "random_password"
        } else {
            "random_string"
        }
    }

    /// The stored object for `result`, as create and import leave it.
    fn object(&self, base: &Value, result: String) -> Result<Value, DriverError> {
        let mut pairs = vec![(
            "id",
            Value::string(if self.password { "none" } else { &result }),
        )];
        if self.password {
            let hash = bcrypt_hash(&result)
                .map_err(|e| failed(self.type_name(), "create", e.to_string()))?;
            pairs.push(("bcrypt_hash", Value::string(hash)));
        }
        pairs.push(("result", Value::string(result)));
        Ok(with(base, pairs))
    }
}

/// The hash as Go's bcrypt package makes it, which the provider uses:
/// version 2a, cost 10.
fn bcrypt_hash(password: &str) -> Result<String, bcrypt::BcryptError> {
    bcrypt::hash_with_result(password, 10).map(|h| h.format_for_version(bcrypt::Version::TwoA))
}

/// What to generate, from a planned object.
struct Params {
    length: usize,
    /// Each enabled character set with its minimum count.
    sets: Vec<(String, usize)>,
}

impl Params {
    fn of(planned: &Value) -> Params {
        let count = |name: &str| number(planned, name).unwrap_or(0).max(0) as usize;
        let on = |name: &str| boolean(planned, name).unwrap_or(true);
        let special = string(planned, "override_special")
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| SPECIAL.to_string());
        let sets = [
            ("upper", UPPER.to_string(), "min_upper"),
            ("lower", LOWER.to_string(), "min_lower"),
            ("numeric", NUMERIC.to_string(), "min_numeric"),
            ("special", special, "min_special"),
        ];
        Params {
            length: count("length"),
            sets: sets
                .into_iter()
                .filter(|(flag, _, _)| on(flag))
                .map(|(_, chars, min)| (chars, count(min)))
                .collect(),
        }
    }

    /// The minimums of each set first, the rest from every enabled set,
    /// then shuffled, as the provider does.
    fn generate(&self, rng: &mut impl Rng) -> Result<String, String> {
        let most = crate::common::MOST as usize;
        if self.length > most || self.sets.iter().any(|(_, min)| *min > most) {
            return Err(format!("strata makes strings of at most {most} characters"));
        }
        let all: Vec<char> = self.sets.iter().flat_map(|(c, _)| c.chars()).collect();
        if all.is_empty() {
            return Err("the character set specified is empty".to_string());
        }
        let mut out: Vec<char> = Vec::with_capacity(self.length);
        for (chars, min) in &self.sets {
            let set: Vec<char> = chars.chars().collect();
            out.extend((0..*min).map(|_| set[rng.gen_range(0..set.len())]));
        }
        let rest = self.length.saturating_sub(out.len());
        out.extend((0..rest).map(|_| all[rng.gen_range(0..all.len())]));
        out.shuffle(rng);
        Ok(out.into_iter().collect())
    }
}

/// The arguments choosing the characters, `flag` and `min` making the
/// switches' and the minimums' schemas.
fn character_sets(
    flag: impl Fn(&'static str) -> AttributeSchema,
    min: impl Fn(&'static str) -> AttributeSchema,
) -> Vec<(&'static str, AttributeSchema)> {
    vec![
        (
            "special",
            flag("Include special characters (default true)."),
        ),
        ("upper", flag("Include upper-case letters (default true).")),
        ("lower", flag("Include lower-case letters (default true).")),
        ("numeric", flag("Include digits (default true).")),
        ("min_numeric", min("At least this many digits.")),
        ("min_upper", min("At least this many upper-case letters.")),
        ("min_lower", min("At least this many lower-case letters.")),
        ("min_special", min("At least this many special characters.")),
        (
            "override_special",
            AttributeSchema::optional(Type::String, "The special characters to use."),
        ),
    ]
}

#[async_trait]
impl Resource for RandomString {
    fn schema(&self) -> ResourceSchema {
        let flag = |d| {
            AttributeSchema::optional(Type::Bool, d)
                .and_computed()
                .force_new()
        };
        let min = |d| {
            AttributeSchema::optional(Type::Number, d)
                .and_computed()
                .force_new()
        };
        let result = AttributeSchema::computed(Type::String, "The generated value.");
        let mut attributes = vec![
            keepers(),
            (
                "length",
                AttributeSchema::required(Type::Number, "Length of the value.").force_new(),
            ),
            ("number", flag("Deprecated: numeric.")),
            (
                "id",
                computed_string("The result, or \"none\" for a password."),
            ),
        ];
        attributes.extend(
            character_sets(flag, min)
                .into_iter()
                .map(|(name, a)| match name {
                    "override_special" => (name, a.force_new()),
                    _ => (name, a),
                }),
        );
        if self.password {
            attributes.push(("result", result.sensitive()));
            attributes.push((
                "bcrypt_hash",
                AttributeSchema::computed(Type::String, "A bcrypt hash of the result.").sensitive(),
            ));
        } else {
            attributes.push(("result", result));
        }
        ResourceSchema {
            version: if self.password { 3 } else { 2 },
            ..ResourceSchema::of_attributes(attributes)
        }
    }

    fn defaults(&self) -> Vec<(&'static str, Value)> {
        let mut out: Vec<(&'static str, Value)> = ["special", "upper", "lower"]
            .into_iter()
            .map(|f| (f, Value::Bool(true)))
            .collect();
        out.extend(MINIMUMS.into_iter().map(|m| (m, Value::int(0))));
        out
    }

    fn validate(&self, config: &Value) -> Vec<Problem> {
        let mut out: Vec<Problem> = crate::common::too_many(config, "length")
            .into_iter()
            .collect();
        if let Some(length) = number(config, "length") {
            if length < 1 {
                out.push(invalid(
                    "length",
                    format!("Attribute length value must be at least 1, got: {length}"),
                ));
            }
            let mins: Option<i64> = MINIMUMS
                .iter()
                .map(
                    |m| match config.unmarked().entries().and_then(|e| e.get(*m)) {
                        Some(v) if !v.is_known() => None,
                        _ => Some(number(config, m).unwrap_or(0)),
                    },
                )
                .sum();
            if mins.is_some_and(|sum| length >= 1 && length < sum) {
                out.push(invalid("length", format!(
                    "Attribute length value must be at least sum of min_upper + min_lower + min_numeric + min_special, got: {length}"
                )));
            }
        }
        if let (Some(a), Some(b)) = (boolean(config, "number"), boolean(config, "numeric")) {
            if a != b {
                out.push(invalid(
                    "numeric",
                    "number and numeric are both configured with different values: numeric replaces number, set only it".to_string(),
                ));
            }
        }
        let off = |f: &str| boolean(config, f) == Some(false);
        let digits_off = off("numeric") || off("number");
        if digits_off && off("special") && off("upper") && off("lower") {
            out.push(invalid(
                "numeric",
                "At least one attribute out of [special,upper,lower,numeric] must be specified as true".to_string(),
            ));
        }
        out
    }

    /// `number` and `numeric` are one setting under two names: whichever
    /// is configured decides both; neither, both are true.
    fn adjust(&self, plan: Planning<'_>) -> Result<Value, DriverError> {
        let said = |name: &str| crate::common::get(plan.config, name);
        if said("number").is_some_and(|v| !v.is_known())
            || said("numeric").is_some_and(|v| !v.is_known())
        {
            return Ok(plan.planned);
        }
        let digits = boolean(plan.config, "numeric")
            .or_else(|| boolean(plan.config, "number"))
            .unwrap_or(true);
        let number = boolean(plan.config, "number").unwrap_or(digits);
        Ok(with(
            &plan.planned,
            vec![
                ("number", Value::Bool(number)),
                ("numeric", Value::Bool(digits)),
            ],
        ))
    }

    async fn create(&self, planned: &Value) -> Result<Value, DriverError> {
        let mut rng = super::generator(self.type_name(), None)?;
        let result = Params::of(planned)
            .generate(&mut rng)
            .map_err(|e| failed(self.type_name(), "create", e))?;
        self.object(planned, result)
    }

    /// The id is the value itself, with every setting at its default.
    fn import(&self, id: &str) -> Option<Result<Value, DriverError>> {
        let mut pairs = self.defaults();
        pairs.push(("number", Value::Bool(true)));
        pairs.push(("numeric", Value::Bool(true)));
        pairs.push(("length", Value::int(id.len() as i64)));
        pairs.push(("keepers", Value::Null(Type::map(Type::String))));
        pairs.push(("override_special", Value::Null(Type::String)));
        let base = with(&Value::Object(Default::default()), pairs);
        Some(self.object(&base, id.to_string()))
    }

    /// Versions before the current one left the defaults unset and had
    /// `number` alone; a password's hash before version 3 was made wrongly
    /// and is made again.
    fn upgrade(&self, version: u64, stored: &serde_json::Value) -> Option<Result<Value, String>> {
        let mut o = stored.as_object()?.clone();
        let result = o
            .get("result")
            .and_then(|r| r.as_str())
            .unwrap_or("")
            .to_string();
        let fill = |o: &mut serde_json::Map<String, serde_json::Value>, k: &str, v| {
            if o.get(k).is_none_or(serde_json::Value::is_null) {
                o.insert(k.to_string(), v);
            }
        };
        fill(&mut o, "length", serde_json::json!(result.len()));
        for m in MINIMUMS {
            fill(&mut o, m, serde_json::json!(0));
        }
        for f in ["special", "upper", "lower", "number"] {
            fill(&mut o, f, serde_json::json!(true));
        }
        let number = o.get("number").cloned().unwrap_or(serde_json::json!(true));
        fill(&mut o, "numeric", number);
        if self.password && version < 3 {
            match bcrypt_hash(&result) {
                Ok(h) => o.insert("bcrypt_hash".to_string(), serde_json::json!(h)),
                Err(e) => return Some(Err(e.to_string())),
            };
        }
        let text = serde_json::Value::Object(o).to_string();
        let ty = self.schema().object_type();
        Some(strata_value::typed_json::value_from_json_text(&text, &ty).map_err(|e| e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn planned(pairs: Vec<(&str, Value)>) -> Value {
        let mut all = RandomString::string().defaults();
        all.push(("numeric", Value::Bool(true)));
        all.extend(pairs);
        with(&Value::Object(Default::default()), all)
    }

    #[test]
    fn minimums_are_met_and_disabled_sets_unused() {
        let p = Params::of(&planned(vec![
            ("length", Value::int(12)),
            ("special", Value::Bool(false)),
            ("upper", Value::Bool(false)),
            ("min_numeric", Value::int(10)),
        ]));
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        for _ in 0..50 {
            let s = p.generate(&mut rng).expect("generated");
            assert_eq!(s.chars().count(), 12);
            assert!(s.chars().filter(char::is_ascii_digit).count() >= 10, "{s}");
            assert!(
                s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()),
                "{s}"
            );
        }
    }

    #[test]
    fn override_special_replaces_the_special_characters() {
        let p = Params::of(&planned(vec![
            ("length", Value::int(30)),
            ("upper", Value::Bool(false)),
            ("lower", Value::Bool(false)),
            ("numeric", Value::Bool(false)),
            ("override_special", Value::string("_")),
        ]));
        let s = p
            .generate(&mut rand::rngs::StdRng::seed_from_u64(1))
            .expect("generated");
        assert_eq!(s, "_".repeat(30));
    }

    #[test]
    fn no_character_set_is_an_error() {
        let config = planned(vec![
            ("length", Value::int(3)),
            ("upper", Value::Bool(false)),
            ("lower", Value::Bool(false)),
            ("special", Value::Bool(false)),
            ("numeric", Value::Bool(false)),
        ]);
        let problems = RandomString::string().validate(&config);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(Params::of(&config)
            .generate(&mut rand::rngs::StdRng::seed_from_u64(1))
            .is_err());
    }

    #[test]
    fn length_below_the_minimums_is_refused_at_length() {
        let config = planned(vec![
            ("length", Value::int(3)),
            ("min_upper", Value::int(2)),
            ("min_lower", Value::int(2)),
        ]);
        let problems = RandomString::string().validate(&config);
        assert_eq!(problems.len(), 1);
        assert!(
            problems[0].detail.contains("at least sum of"),
            "{:?}",
            problems[0]
        );
        assert_eq!(strata_provider::path_text(&problems[0].path), "length");
    }
}

/// `ephemeral "random_password"` (random 3.7): a password made anew each
/// time a run opens it, never kept — for write-only arguments.
pub(crate) struct EphemeralPassword;

#[async_trait]
impl DataSource for EphemeralPassword {
    fn schema(&self) -> ResourceSchema {
        let flag = |d| AttributeSchema::optional(Type::Bool, d).and_computed();
        let min = |d| AttributeSchema::optional(Type::Number, d).and_computed();
        let secret = |d| AttributeSchema::computed(Type::String, d).sensitive();
        let mut attributes = character_sets(flag, min);
        attributes.extend([
            (
                "length",
                AttributeSchema::required(Type::Number, "Length of the value."),
            ),
            ("result", secret("The generated password.")),
            ("bcrypt_hash", secret("A bcrypt hash of the result.")),
        ]);
        ResourceSchema::of_attributes(attributes)
    }

    fn validate(&self, config: &Value) -> Vec<Problem> {
        RandomString::password().validate(config)
    }

    async fn read(&self, config: &Value) -> Result<Value, DriverError> {
        const TYPE: &str = "random_password";
        let config = crate::provider::with_defaults(config, RandomString::password().defaults());
        let numeric = boolean(&config, "numeric").unwrap_or(true);
        let config = with(&config, vec![("numeric", Value::Bool(numeric))]);
        let mut rng = super::generator(TYPE, None)?;
        let result = Params::of(&config)
            .generate(&mut rng)
            .map_err(|e| failed(TYPE, "open", e))?;
        let hash = bcrypt_hash(&result).map_err(|e| failed(TYPE, "open", e.to_string()))?;
        Ok(with(
            &config,
            vec![
                ("bcrypt_hash", Value::string(hash)),
                ("result", Value::string(result)),
            ],
        ))
    }
}
