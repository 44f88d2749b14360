//! The stand-in agent (see `weft_faults::standin`): linked as `claude` or `codex`.

fn main() {
    weft_faults::standin::main();
}
