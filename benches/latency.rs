//! Benchmark, not a test: apply against a driver whose every call takes a
//! fixed time, as a cloud's API does. It prints apply's wall time against
//! the bound no engine can beat — the longer of the critical path (the
//! graph's depth × the latency) and the work spread over the parallelism
//! (N × latency ÷ parallelism) — and the driver calls a refresh of N
//! resources of one type costs.
//!
//! `cargo bench --bench latency -- [N] [LATENCY_MS] [PARALLELISM]`
//! (defaults 1000, 20, 10).

use async_trait::async_trait;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use strata::builtin::terraform_data::TerraformData;
use strata::builtin::Drivers;
use strata::lang::value::Value;
use strata_provider::{Driver, DriverError, PlanRequest, Planned, ResourceSchema, Tags};

const TYPE: &str = "slow_data";
const PAGE: usize = 100;

/// `terraform_data` behind an API that answers every call after `delay`,
/// counting the calls: one per write, one per page of a batched read.
struct Slow {
    delay: Duration,
    schemas: BTreeMap<String, ResourceSchema>,
    reads: AtomicUsize,
    writes: AtomicUsize,
    /// Time the writes really took, in microseconds: a timer sleeps a
    /// little longer than asked, which is the API's latency, not the engine's.
    write_micros: AtomicUsize,
}

impl Slow {
    async fn call(&self, write: bool) {
        let start = Instant::now();
        tokio::time::sleep(self.delay).await;
        if write {
            self.writes.fetch_add(1, Ordering::SeqCst);
            self.write_micros
                .fetch_add(start.elapsed().as_micros() as usize, Ordering::SeqCst);
        } else {
            self.reads.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[async_trait]
impl Driver for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn provider_address(&self) -> String {
        "provider[\"example.com/bench/slow\"]".into()
    }
    fn resource_schemas(&self) -> &BTreeMap<String, ResourceSchema> {
        &self.schemas
    }
    fn plan(&self, req: PlanRequest<'_>) -> Result<Planned, DriverError> {
        TerraformData::default().plan(PlanRequest {
            type_name: "terraform_data",
            ..req
        })
    }
    async fn read(&self, _t: &str, instances: &[Value]) -> Result<Vec<Option<Value>>, DriverError> {
        // A describe call answers up to PAGE objects, as cloud list APIs do.
        for _ in instances.chunks(PAGE) {
            self.call(false).await;
        }
        Ok(instances.iter().cloned().map(Some).collect())
    }
    async fn create(&self, _t: &str, planned: &Value, tags: &Tags) -> Result<Value, DriverError> {
        self.call(true).await;
        TerraformData::default()
            .create("terraform_data", planned, tags)
            .await
    }
    async fn update(&self, _t: &str, prior: &Value, planned: &Value) -> Result<Value, DriverError> {
        self.call(true).await;
        TerraformData::default()
            .update("terraform_data", prior, planned)
            .await
    }
    async fn delete(&self, _t: &str, _prior: &Value) -> Result<(), DriverError> {
        self.call(true).await;
        Ok(())
    }
}

#[async_trait]
impl strata_provider::Recovery for Slow {
    async fn find_tagged(&self, _t: &str, _tags: &Tags) -> Result<Vec<Value>, DriverError> {
        Ok(Vec::new())
    }
}

impl strata_provider::Billing for Slow {}
impl strata_provider::Ephemerals for Slow {}

/// N resources in a 10-ary tree, each input naming its parent's output.
fn config(n: usize) -> (String, usize) {
    let mut text = String::new();
    let mut depth = 0;
    for i in 0..n {
        let parent = if i == 0 {
            "\"root\"".to_string()
        } else {
            format!("{TYPE}.r{}.output", (i - 1) / 10)
        };
        text.push_str(&format!(
            "resource \"{TYPE}\" \"r{i}\" {{\n  input = {{ parent = {parent}, name = \"r{i}\" }}\n}}\n"
        ));
        let mut d = 1;
        let mut j = i;
        while j > 0 {
            j = (j - 1) / 10;
            d += 1;
        }
        depth = depth.max(d);
    }
    (text, depth)
}

fn run(dir: &Path, drivers: &Drivers, args: &[&str]) -> Duration {
    let mut argv = vec!["strata".into()];
    argv.extend(args.iter().map(|a| a.into()));
    argv.push("--state".into());
    argv.push(dir.join("s.tfstate").into_os_string());
    let cwd = std::env::current_dir().expect("cwd");
    std::env::set_current_dir(dir).expect("cd");
    let start = Instant::now();
    let code = strata::cli::main_with(drivers.clone(), argv);
    let took = start.elapsed();
    std::env::set_current_dir(cwd).expect("cd back");
    assert_eq!(
        code,
        std::process::ExitCode::SUCCESS,
        "strata {args:?} failed"
    );
    took
}

fn main() {
    let nums: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = nums.first().copied().unwrap_or(1000);
    let latency = Duration::from_millis(nums.get(1).copied().unwrap_or(20) as u64);
    let parallelism = nums.get(2).copied().unwrap_or(10);
    let dir = std::env::temp_dir().join(format!("strata-bench-latency-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    let (text, depth) = config(n);
    std::fs::write(dir.join("main.tf"), text).expect("write");
    let slow = Arc::new(Slow {
        delay: latency,
        schemas: BTreeMap::from([(
            TYPE.to_string(),
            TerraformData::default().resource_schemas()["terraform_data"].clone(),
        )]),
        reads: AtomicUsize::new(0),
        writes: AtomicUsize::new(0),
        write_micros: AtomicUsize::new(0),
    });
    let drivers = Drivers::builtin().with(slow.clone());
    let p = parallelism.to_string();
    let apply = run(
        &dir,
        &drivers,
        &["apply", "--auto-approve", "--parallelism", &p],
    );
    let writes = slow.writes.load(Ordering::SeqCst);
    let took =
        Duration::from_micros((slow.write_micros.load(Ordering::SeqCst) / writes.max(1)) as u64);
    println!(
        "apply of {n} resources, {depth}-deep tree, parallelism {parallelism}, {writes} driver writes of {} ms asked, {:.2} ms taken on average:",
        latency.as_millis(),
        took.as_secs_f64() * 1000.0
    );
    for (what, per_call) in [("asked", latency), ("taken", took)] {
        let critical = per_call * depth as u32;
        let spread = per_call * n as u32 / parallelism as u32;
        let bound = critical.max(spread);
        println!(
            "  wall {:.2} s; bound with the latency {what} {:.2} s (critical path {:.2} s, N x latency / parallelism {:.2} s); ratio {:.3}",
            apply.as_secs_f64(),
            bound.as_secs_f64(),
            critical.as_secs_f64(),
            spread.as_secs_f64(),
            apply.as_secs_f64() / bound.as_secs_f64()
        );
    }
    let before = slow.reads.load(Ordering::SeqCst);
    let plan = run(&dir, &drivers, &["plan"]);
    let reads = slow.reads.load(Ordering::SeqCst) - before;
    println!(
        "refresh + plan of {n} resources of one type: {:.2} s, {reads} API read calls of up to {PAGE} objects ({:.4} per resource; target <= {:.4})",
        plan.as_secs_f64(),
        reads as f64 / n as f64,
        1.0 / 20.0
    );
    let _ = std::fs::remove_dir_all(&dir);
}
