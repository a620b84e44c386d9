//! The `zamburak` binary: everything it does is in `zamburak::cli`.

/// Counts every byte, so a worker (`zamburak __worker`) can hold a plan to `limits.max_memory_mb`. Unarmed
/// (every other command) it only counts.
#[global_allocator]
static ALLOC: monty_alloc::LimitedAllocator = monty_alloc::LimitedAllocator;

fn main() -> zamburak::exit::Exit {
    zamburak::cli::main()
}
