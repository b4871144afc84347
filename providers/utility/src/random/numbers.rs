//! `random_integer` (a number in a range) and `random_shuffle` (a
//! permutation of a list), both repeatable with a `seed`.

use super::{generator, keepers};
use crate::common::{bad_import, computed_string, count, failed, invalid, number, string, with};
use crate::provider::Resource;
use async_trait::async_trait;
use rand::seq::SliceRandom;
use rand::Rng;
use strata_provider::values::strings;
use strata_provider::{AttributeSchema, DriverError, Problem, ResourceSchema};
use strata_value::types::Type;
use strata_value::value::Value;

fn seed() -> (&'static str, AttributeSchema) {
    (
        "seed",
        AttributeSchema::optional(Type::String, "Makes the result repeatable.").force_new(),
    )
}

pub(crate) struct RandomInteger;

#[async_trait]
impl Resource for RandomInteger {
    fn schema(&self) -> ResourceSchema {
        ResourceSchema::of_attributes(vec![
            keepers(),
            (
                "min",
                AttributeSchema::required(Type::Number, "The smallest result.").force_new(),
            ),
            (
                "max",
                AttributeSchema::required(Type::Number, "The largest result.").force_new(),
            ),
            seed(),
            (
                "result",
                AttributeSchema::computed(Type::Number, "The generated integer."),
            ),
            ("id", computed_string("The result in decimal.")),
        ])
    }

    fn validate(&self, config: &Value) -> Vec<Problem> {
        match (number(config, "min"), number(config, "max")) {
            (Some(min), Some(max)) if max < min => vec![invalid(
                "max",
                format!("The minimum (min) value needs to be smaller than or equal to maximum (max) value; min is {min}, max is {max}."),
            )],
            _ => Vec::new(),
        }
    }

    async fn create(&self, planned: &Value) -> Result<Value, DriverError> {
        let (min, max) = (number(planned, "min"), number(planned, "max"));
        let (Some(min), Some(max)) = (min, max) else {
            return Err(failed(
                "random_integer",
                "create",
                "min and max must be whole numbers".into(),
            ));
        };
        if max < min {
            return Err(failed("random_integer", "create", format!(
                "The minimum (min) value needs to be smaller than or equal to maximum (max) value; min is {min}, max is {max}."
            )));
        }
        let seed = string(planned, "seed");
        let n = generator("random_integer", seed.as_deref())?.gen_range(min..=max);
        Ok(with(
            planned,
            vec![
                ("result", Value::int(n)),
                ("id", Value::string(n.to_string())),
            ],
        ))
    }

    /// `RESULT,MIN,MAX` or `RESULT,MIN,MAX,SEED`.
    fn import(&self, id: &str) -> Option<Result<Value, DriverError>> {
        let parts: Vec<&str> = id.split(',').collect();
        let bad = || {
            bad_import(
                "random_integer",
                format!(
                    "the id {id:?} is not RESULT,MIN,MAX or RESULT,MIN,MAX,SEED with whole numbers"
                ),
            )
        };
        let numbers: Option<Vec<i64>> = parts.iter().take(3).map(|p| p.parse().ok()).collect();
        let (Some(n), 3..=4) = (numbers, parts.len()) else {
            return Some(Err(bad()));
        };
        let seed = parts
            .get(3)
            .map_or(Value::Null(Type::String), |s| Value::string(*s));
        Some(Ok(with(
            &Value::Object(Default::default()),
            vec![
                ("keepers", Value::Null(Type::map(Type::String))),
                ("result", Value::int(n[0])),
                ("min", Value::int(n[1])),
                ("max", Value::int(n[2])),
                ("seed", seed),
                ("id", Value::string(n[0].to_string())),
            ],
        )))
    }
}

pub(crate) struct RandomShuffle;

/// `count` items of `input`: whole permutations one after another, the
/// last cut short, so no item comes up more often than once a round.
fn shuffled(input: &[String], count: usize, rng: &mut impl Rng) -> Vec<String> {
    let mut out = Vec::with_capacity(count);
    while out.len() < count && !input.is_empty() {
        let mut round: Vec<&String> = input.iter().collect();
        round.shuffle(rng);
        out.extend(round.into_iter().take(count - out.len()).cloned());
    }
    out
}

#[async_trait]
impl Resource for RandomShuffle {
    fn schema(&self) -> ResourceSchema {
        ResourceSchema::of_attributes(vec![
            keepers(),
            seed(),
            (
                "input",
                AttributeSchema::required(Type::list(Type::String), "The items to shuffle.")
                    .force_new(),
            ),
            (
                "result_count",
                AttributeSchema::optional(Type::Number, "How many items (default: all).")
                    .force_new(),
            ),
            (
                "result",
                AttributeSchema::computed(Type::list(Type::String), "The shuffled items."),
            ),
            ("id", computed_string("Always \"-\".")),
        ])
    }

    async fn create(&self, planned: &Value) -> Result<Value, DriverError> {
        let input = strings(planned, "input");
        let count = count("random_shuffle", planned, "result_count", input.len())?;
        let seed = string(planned, "seed");
        let mut rng = generator("random_shuffle", seed.as_deref())?;
        let result = shuffled(&input, count, &mut rng);
        Ok(with(
            planned,
            vec![
                ("result", strata_provider::values::string_list(&result)),
                ("id", Value::string("-")),
            ],
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_repeats_and_long_results_use_every_item_each_round() {
        let input: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
        let a = shuffled(&input, 7, &mut generator("t", Some("s")).expect("rng"));
        let b = shuffled(&input, 7, &mut generator("t", Some("s")).expect("rng"));
        assert_eq!(a, b);
        assert_eq!(a.len(), 7);
        let mut first: Vec<&String> = a[..3].iter().collect();
        first.sort();
        assert_eq!(first, input.iter().collect::<Vec<_>>());
        assert!(shuffled(&[], 3, &mut generator("t", None).expect("rng")).is_empty());
    }

    #[test]
    fn import_reads_result_min_max_and_seed() {
        let o = RandomInteger
            .import("15,1,20,x")
            .expect("imports")
            .expect("valid");
        assert_eq!(number(&o, "result"), Some(15));
        assert_eq!(string(&o, "seed").as_deref(), Some("x"));
        assert!(RandomInteger.import("15,1").expect("answer").is_err());
        assert!(RandomInteger.import("a,1,2").expect("answer").is_err());
    }
}
