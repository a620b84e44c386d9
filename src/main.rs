//! The `zamburak` binary: everything it does is in `zamburak::cli`.

fn main() -> std::process::ExitCode {
    zamburak::cli::main()
}
