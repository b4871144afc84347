#![no_main]
mod bodies;
libfuzzer_sys::fuzz_target!(|data: &[u8]| bodies::plan_file(data));
