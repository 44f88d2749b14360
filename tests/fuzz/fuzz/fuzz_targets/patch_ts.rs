#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| weft_fuzz_targets::patch_ts(data));
