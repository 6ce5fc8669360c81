//! The `quartermaster` binary: everything lives in the library; see `quartermaster::cli`.

fn main() -> std::process::ExitCode {
    quartermaster::cli::main()
}
